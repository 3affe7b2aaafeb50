#!/usr/bin/env python3
"""Fills price_reserved_1y / price_reserved_3y in data/instances/<cloud>.csv from a stored source.

Offline refresh tool (the build never runs it). A reserved price is written only where the
source's own on-demand price for the same shape and region matches the row's on-demand price
within 1%, so the reserved figure is known to describe the same SKU. Nothing is derived from a
discount percentage. Existing reserved prices are left as they are.

  aws:  tools/fill_reserved.py aws gpu_instances_raw.json SOURCE_URL AS_OF
        instances.vantage.sh records (as stored by tsaol/aws-gpu data/gpu_instances_raw.json):
        pricing[region].linux.reserved["yrTerm1Standard.noUpfront"] and
        ["yrTerm3Standard.noUpfront"]: standard Reserved Instances, no upfront, Linux.
  gcp:  tools/fill_reserved.py gcp pricing.yml SOURCE_URL AS_OF
        Cyclenerd google-cloud-pricing-cost-calculator pricing.yml: resource-based CUD
        month_1y / month_3y per 730 h.
"""
import csv
import io
import json
import re
import sys


def load_aws(path):
    out = {}
    for inst in json.load(open(path, encoding="utf-8")):
        for region, p in inst.get("pricing", {}).items():
            linux = p.get("linux", {})
            res = linux.get("reserved") or {}
            one, three = res.get("yrTerm1Standard.noUpfront"), res.get("yrTerm3Standard.noUpfront")
            if linux.get("ondemand") and (one or three):
                out[(inst["instance_type"], region)] = (float(linux["ondemand"]), one, three)
    return out


def load_gcp(path):
    import yaml  # python3-yaml (Debian); only this offline tool uses it

    doc = yaml.safe_load(open(path, encoding="utf-8"))
    out = {}
    for name, inst in doc["compute"]["instance"].items():
        for region, c in inst.get("cost", {}).items():
            if c.get("month_1y") and c.get("hour"):
                three = c.get("month_3y", 0) / 730
                out[(name, region)] = (c["hour"], f"{c['month_1y'] / 730:.6g}", f"{three:.6g}" if three else None)
    return out


def main():
    cloud, src, url, as_of = sys.argv[1:5]
    prices = load_aws(src) if cloud == "aws" else load_gcp(src)
    path = f"data/instances/{cloud}.csv"
    lines = open(path, encoding="utf-8").read().splitlines(keepends=True)
    header = next(l for l in lines if not l.startswith("#"))
    cols = next(csv.reader([header]))
    filled = 0
    out = []
    for line in lines:
        if line.startswith("#") or line == header:
            out.append(line)
            continue
        row = dict(zip(cols, next(csv.reader([line]))))
        key = (row["instance_type"].split("+")[0], row["region"])
        got = prices.get(key)
        od = row["price_on_demand"]
        if (not got or not od or row["price_reserved_1y"] or row["price_reserved_3y"]
                or abs(got[0] - float(od)) / float(od) > 0.01):
            out.append(line)
            continue
        row["price_reserved_1y"] = got[1] or ""
        row["price_reserved_3y"] = got[2] or ""
        term = ("standard Reserved Instance, no upfront, Linux ("
                + " and ".join(t for t, v in (("1-year", got[1]), ("3-year", got[2])) if v) + ")"
                if cloud == "aws" else "resource-based committed-use 1y/3y, no upfront")
        row["notes"] = (row["notes"] + "; " if row["notes"] else "") + (
            f"reserved = {term}, read {as_of} from reserved_source (its on-demand for this shape "
            f"and region is {got[0]}/h)")
        row["reserved_source"] = url
        buf = io.StringIO()
        csv.writer(buf, lineterminator=line[len(line.rstrip("\r\n")):] or "\n").writerow(
            [row[c] for c in cols])
        out.append(buf.getvalue())
        filled += 1
    open(path, "w", encoding="utf-8").write("".join(out))
    print(f"{path}: {filled} rows filled")


if __name__ == "__main__":
    main()
