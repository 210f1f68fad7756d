#!/usr/bin/env python3
"""Run-to-run noise of several statistics, from raw samples.

Reads a file written by `KBENCH_SAMPLES_FILE=PATH kbench run ...` (lines
`run_id,point,index,set,us`, every sample of every point, over one or more
runs) and prints per point: the runs, the median count of samples a run,
the median spread of the samples inside a run, and the run-to-run noise
(1.4826 * MAD / median over the runs, as `kgate noise` computes it) of the
row's statistic (the median) beside other statistics it could have been
(mean, interquartile mean, 10th percentile, minimum).

Why: when a row's run-to-run noise is larger than its within-run standard
error, the cause is a state of the run (the process, its allocations, the
board) and no statistic or sample count removes it; when a statistic other
than the median holds much stiller, the samples are the problem
(docs/decisions/0003-median-of-a-process-samples.md).

Usage: lab/tools/samples_stats.py FILE[.gz] [--points REGEX] [--min-runs N]
Exit 2 on a missing or malformed file.
"""
import argparse
import collections
import csv
import gzip
import math
import re
import statistics
import sys


def quantile(sorted_v, p):
    k = (len(sorted_v) - 1) * p
    lo = math.floor(k)
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (k - lo)


def interquartile_mean(sorted_v):
    n = len(sorted_v)
    a = n // 4
    b = max(a + 1, math.ceil(3 * n / 4))
    return statistics.fmean(sorted_v[a:b])


STATS = {
    "median": lambda s: quantile(s, 0.5),
    "mean": statistics.fmean,
    "iq_mean": interquartile_mean,
    "p10": lambda s: quantile(s, 0.10),
    "min": lambda s: s[0],
}


def robust_noise(values):
    """1.4826 * MAD / median: kgate noise's run-to-run noise."""
    m = statistics.median(values)
    if m == 0:
        return 0.0
    return 1.4826 * statistics.median(abs(v - m) for v in values) / m


def load(path):
    points = collections.OrderedDict()
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        for lineno, row in enumerate(csv.reader(f), 1):
            if not row:
                continue
            if len(row) != 5:
                raise ValueError(f"{path}:{lineno}: expected run_id,point,index,set,us, got {len(row)} fields")
            run, point, _, _, us = row
            try:
                t = float(us)
            except ValueError:
                raise ValueError(f"{path}:{lineno}: '{us}' is not a time in us") from None
            if not math.isfinite(t) or t <= 0:
                raise ValueError(f"{path}:{lineno}: '{us}' is not a positive time in us")
            points.setdefault(point, collections.OrderedDict()).setdefault(run, []).append(t)
    return points


def table(points, min_runs):
    out = []
    for point, runs in points.items():
        if len(runs) < min_runs:
            continue
        sorted_runs = [sorted(v) for v in runs.values()]
        row = {
            "point": point,
            "runs": len(sorted_runs),
            "samples": statistics.median(len(s) for s in sorted_runs),
            "within": statistics.median(robust_noise(s) for s in sorted_runs),
        }
        for name, f in STATS.items():
            row[name] = robust_noise([f(s) for s in sorted_runs])
        out.append(row)
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--points", default="", help="only points whose name matches this regex")
    ap.add_argument("--min-runs", type=int, default=3, help="points seen in fewer runs are left out (default 3)")
    a = ap.parse_args(argv)
    try:
        points = load(a.file)
    except (OSError, ValueError) as e:
        print(f"samples_stats: {e}", file=sys.stderr)
        return 2
    if a.points:
        rx = re.compile(a.points)
        points = collections.OrderedDict((k, v) for k, v in points.items() if rx.search(k))
    rows = table(points, a.min_runs)
    if not rows:
        print(f"samples_stats: no point of {a.file} has {a.min_runs} runs or more", file=sys.stderr)
        return 1
    width = max(len(r["point"]) for r in rows)
    names = list(STATS)
    print(f"{'point':<{width}}  runs  samples  within | run-to-run noise of: " + " ".join(f"{n:>7}" for n in names))
    for r in rows:
        cells = " ".join(f"{100 * r[n]:6.2f}%" for n in names)
        print(f"{r['point']:<{width}}  {r['runs']:4d}  {r['samples']:7.0f}  {100 * r['within']:5.2f}% | {'':20}{cells}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # piped into head
        sys.exit(0)
