#!/usr/bin/env python3
"""Feature-map elements and MACs of one forward of MLPerf's RetinaNet at 800x800.

MLPerf's RetinaNet (Training: single-stage detector, Inference: retinanet) is torchvision's
RetinaNet with a ResNeXt50-32x4d backbone, an FPN over C3-C5 giving P3-P7 (256 channels; P6 a
stride-2 3x3 convolution on C5, P7 one on ReLU(P6)), and two heads of four 3x3 convolutions of 256
channels on every level, ending in 9 anchors x 264 classes (classification) and 9 x 4 (boxes).

Prints, per image:
  feature_melems: the output elements of every convolution and of the stem's max pool, millions
                  (the `activation_melems_per_sample` of data/models, counted as for the
                  ResNets: the same walk over ResNet-50 at 224x224 gives its 11.31M)
  gmacs:          multiply-accumulates of those convolutions, a cross-check against the preset's
                  published 201.2 GMAC (its gflops_per_sample / 2)
  and the same two for the stem and first stage, which training keeps frozen (torchvision's
  trainable_backbone_layers=3, as MLPerf's reference): the preset's frozen_* figures

Usage: tools/retinanet_feature_maps.py [side=800] [classes=264]
"""
import math
import sys


def main():
    side = int(sys.argv[1]) if len(sys.argv) > 1 else 800
    classes = int(sys.argv[2]) if len(sys.argv) > 2 else 264
    elems = 0.0
    macs = 0.0

    def conv(cin, cout, h, k=3, groups=1):
        nonlocal elems, macs
        elems += cout * h * h
        macs += cin // groups * cout * k * k * h * h

    def out_side(h, stride):
        return math.ceil(h / stride)

    h = out_side(side, 2)
    conv(3, 64, h, k=7)  # stem
    h = out_side(h, 2)
    elems += 64 * h * h  # the max pool's output (the ResNet presets count it: 11.31M)
    cin = 64
    feats = {}
    # (blocks, bottleneck width, out channels, stride): ResNeXt50-32x4d, groups 32
    for stage, (blocks, width, cout, stride) in enumerate(
        [(3, 128, 256, 1), (4, 256, 512, 2), (6, 512, 1024, 2), (3, 1024, 2048, 2)], start=2
    ):
        for b in range(blocks):
            s = stride if b == 0 else 1
            conv(cin, width, h, k=1)  # 1x1 at the input resolution
            h_out = out_side(h, s)
            conv(width, width, h_out, k=3, groups=32)  # grouped 3x3 carries the stride
            conv(width, cout, h_out, k=1)
            if b == 0:
                conv(cin, cout, h_out, k=1)  # projection shortcut
            cin, h = cout, h_out
        feats[stage] = (cout, h)
        if stage == 2:  # the stem and stage 1: frozen in training (trainable_backbone_layers 3)
            frozen = (elems, macs)
    # FPN: lateral 1x1 and output 3x3 on C3-C5, then P6, P7 (stride-2 3x3 convolutions).
    levels = []
    for stage in (3, 4, 5):
        c, hh = feats[stage]
        conv(c, 256, hh, k=1)
        conv(256, 256, hh, k=3)
        levels.append(hh)
    c5, h5 = feats[5]
    h6 = out_side(h5, 2)
    conv(c5, 256, h6, k=3)
    h7 = out_side(h6, 2)
    conv(256, 256, h7, k=3)
    levels += [h6, h7]
    # Heads on every level: 4 x (3x3, 256) then the predictor.
    for hh in levels:
        for out in (9 * classes, 9 * 4):
            for _ in range(4):
                conv(256, 256, hh, k=3)
            conv(256, out, hh, k=3)
    print(f"RetinaNet ResNeXt50-32x4d FPN at {side}x{side}, {classes} classes: "
          f"feature_melems {elems / 1e6:.1f}  gmacs {macs / 1e9:.1f}")
    print(f"  frozen in training (stem and stage 1): feature_melems {frozen[0] / 1e6:.1f}  "
          f"gmacs {frozen[1] / 1e9:.1f}")


if __name__ == "__main__":
    main()
