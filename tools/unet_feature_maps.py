#!/usr/bin/env python3
"""Feature-map elements and FLOPs of one forward of a diffusers UNet2DConditionModel.

Walks the architecture a diffusers `unet/config.json` describes (conv_in; down blocks of
ResnetBlock2D [+ Transformer2DModel] and a stride-2 downsample; the mid block; up blocks of
layers_per_block + 1 resnets on the skip-concatenated input [+ transformers] and a nearest
upsample + conv; conv_out) at the config's sample_size, batch 1, 77 text tokens.

Prints, per sample:
  feature_melems: the output elements of every convolution and linear layer on the latent
                  grid, millions (the `activation_melems_per_sample` of data/models; the ResNets'
                  count is every convolution's output, and a UNet's transformer blocks are
                  linear layers over the same grid)
  gflops:         2 x MACs of those layers plus attention (QK^T and AV), a cross-check against
                  the preset's published gflops_per_sample

Usage: tools/unet_feature_maps.py data/models/sd-1.5-unet.json
"""
import json
import sys

TEXT = 77


def walk(cfg):
    ch = cfg["block_out_channels"]
    n_blocks = len(ch)
    lpb = cfg.get("layers_per_block", 2)
    depth = cfg.get("transformer_layers_per_block", 1)
    depth = depth if isinstance(depth, list) else [depth] * n_blocks
    ctx = cfg.get("cross_attention_dim", 768)
    ctx = ctx if isinstance(ctx, int) else ctx[0]
    side = cfg["sample_size"]
    elems = 0.0
    macs = 0.0

    def conv(cin, cout, hw, k=3):
        nonlocal elems, macs
        elems += cout * hw
        macs += cin * cout * k * k * hw

    def linear(cin, cout, tokens):
        nonlocal elems, macs
        elems += cout * tokens
        macs += cin * cout * tokens

    def resnet(cin, cout, hw):
        conv(cin, cout, hw)
        conv(cout, cout, hw)
        if cin != cout:
            conv(cin, cout, hw, k=1)

    def transformer(c, hw, layers):
        nonlocal macs
        linear(c, c, hw)  # proj_in
        for _ in range(layers):
            linear(c, 3 * c, hw)  # self-attention q, k, v
            macs += 2 * hw * hw * c  # QK^T and AV
            linear(c, c, hw)  # its output
            linear(c, c, hw)  # cross-attention q
            macs += 2 * ctx * c * TEXT  # k, v of the text (not on the grid)
            macs += 2 * hw * TEXT * c
            linear(c, c, hw)  # its output
            linear(c, 8 * c, hw)  # GEGLU projection (2 x 4c)
            linear(4 * c, c, hw)  # feed-forward output
        linear(c, c, hw)  # proj_out

    hw = side * side
    conv(cfg["in_channels"], ch[0], hw)
    skips = [ch[0]]
    cin = ch[0]
    for i, kind in enumerate(cfg["down_block_types"]):
        cout = ch[i]
        for _ in range(lpb):
            resnet(cin, cout, hw)
            if "CrossAttn" in kind:
                transformer(cout, hw, depth[i])
            cin = cout
            skips.append(cout)
        if i < n_blocks - 1:
            hw //= 4
            conv(cout, cout, hw)  # stride-2 downsample
            skips.append(cout)
    resnet(cin, cin, hw)
    if "CrossAttn" in cfg.get("mid_block_type", "UNetMidBlock2DCrossAttn"):
        transformer(cin, hw, depth[-1])
    resnet(cin, cin, hw)
    rev = list(reversed(ch))
    rdepth = list(reversed(depth))
    for i, kind in enumerate(cfg["up_block_types"]):
        cout = rev[i]
        for _ in range(lpb + 1):
            resnet(cin + skips.pop(), cout, hw)
            if "CrossAttn" in kind:
                transformer(cout, hw, rdepth[i])
            cin = cout
        if i < n_blocks - 1:
            hw *= 4
            conv(cout, cout, hw)  # upsample conv
    conv(cin, cfg["out_channels"], hw)
    return elems / 1e6, 2 * macs / 1e9


def main():
    for path in sys.argv[1:]:
        cfg = json.load(open(path))
        melems, gflops = walk(cfg)
        published = cfg.get("gpuplan", {}).get("gflops_per_sample")
        print(f"{path}: feature_melems {melems:.1f}  gflops {gflops:.1f}"
              f"  (preset gflops_per_sample {published})")


if __name__ == "__main__":
    main()
