#!/usr/bin/env python3
"""Gathers the figures of every benchmark result in bench/results/ into
bench/results/latest.json and prints them as one table (adapt, its peer, the ratio).

A result file from an earlier run than --since (seconds since the epoch) is left out, so the
summary of bench/run.sh shows only what that run measured.
"""

import argparse
import glob
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import figures  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--results", default=os.path.join(HERE, "results"))
    p.add_argument("--since", type=float, default=0.0)
    p.add_argument("--markdown", action="store_true",
                   help="print latest.json as the README's Markdown table; gather nothing")
    args = p.parse_args()
    if args.markdown:
        with open(os.path.join(args.results, "latest.json")) as f:
            for line in figures.markdown_lines(json.load(f)["figures"]):
                print(line)
        return 0
    rows, benchmarks, missing = [], [], []
    for path in sorted(glob.glob(os.path.join(args.results, "*.json"))):
        if os.path.basename(path) == "latest.json" or os.path.getmtime(path) < args.since:
            continue
        with open(path) as f:
            report = json.load(f)
        name = report.get("benchmark", os.path.basename(path)[:-5])
        if not report.get("figures"):
            missing.append(name)
            continue
        benchmarks.append(name)
        rows += [dict(r, benchmark=name) for r in report["figures"]]
    latest = {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "host": {"kernel": platform.release(), "cpus": os.cpu_count()},
              "benchmarks": benchmarks, "without_figures": missing, "figures": rows}
    out = os.path.join(args.results, "latest.json")
    with open(out + ".tmp", "w") as f:
        json.dump(latest, f, indent=2)
        f.write("\n")
    os.replace(out + ".tmp", out)
    for line in figures.table_lines(rows, with_benchmark=True):
        print(line)
    if missing:
        print("without figures: " + ", ".join(missing))
    print("wrote " + out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
