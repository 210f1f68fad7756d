#!/usr/bin/env python3
"""Several GPUs at once: do the worker processes shared out hold a key still?

On one GPU `kbench run` measures a kernel point in 3 worker processes (9
under 20 us) and the row is the mean of their medians. On N GPUs at once each
GPU measures ceil(6 / N) (ceil(18 / N)), never more than one GPU would, and
the gate judges the night by the median of the N GPUs' rows (docs/gate.md "Several GPUs"). This resamples the
process medians that rows list in their message (histories recorded with
kbench run --detail) as such nights: each GPU's row the mean of k process
medians drawn from one recorded run (without replacement), each GPU from a
run of its own, the night the median over the GPUs; 300 windows of 20
nights per key, and the 90th percentile of the windows' run-to-run noise
(1.4826 * MAD / median), as process_stat_sim.py and `kgate noise` read it.
Runs stand in for GPUs: what a real night's GPUs share (the host, the
driver, the hour) is resampled as if they did not, so the columns of
several GPUs are a little optimistic where a key's noise is shared
(docs/decisions/0017: median 0.10 of the variance on one board).

  lab/tools/process_share_sim.py RESULTS.csv ...   (runs recorded with kbench run --detail)
  lab/tools/process_share_sim.py --k 1 FILE     # one process on every GPU instead

docs/decisions/0007-processes-shared-over-gpus.md has what it printed.
"""
import collections
import csv
import random
import re
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from process_stat_sim import noise  # noqa: E402  (the same run-to-run noise)

GPUS = [1, 2, 4, 8]
SHORT_US = 20  # kShortPointUs
PROCESSES = re.compile(r"the mean of (\d+) worker processes' medians ([\d., ]+) us")


def processes_per_gpu(short, gpus):
    """kbench run's default (suite/rows.h worker_processes): twice the one
    GPU's count shared out, never more than it, at least 2 under 20 us."""
    n = 9 if short else 3
    k = min(n, -(-2 * n // gpus))
    return max(2, k) if short else k


def load(path):
    """{key: {run_id: [process medians]}} from the rows' messages."""
    keys = collections.defaultdict(dict)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = {"name", "shape", "dtype", "run_id", "message"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}: "
                             "not a kbench results CSV")
        for r in reader:
            m = PROCESSES.search(r.get("message") or "")
            if not m or r["shape"] == "mean":
                continue
            key = (r["name"], r["shape"], r["dtype"])
            keys[key][r["run_id"]] = [float(x) for x in m[2].split(",")]
    return keys


def p90(night, runs, rnd, window=20, reps=300):
    out = sorted(noise([night(runs, rnd) for _ in range(window)]) for _ in range(reps))
    return out[int(0.9 * len(out))]


def table(path, rnd, forced_k=None):
    keys = load(path)
    print(f"== {path}")
    head = " | ".join(f"{g} GPU{'s' if g > 1 else ''}" for g in GPUS)
    print(f"{'key':48s} {'us':>8s}  bar  | {head}  (p90 noise %, per GPU: k processes)")
    over = collections.Counter()
    n = 0
    for key, runs in sorted(keys.items()):
        R = [v for v in runs.values() if v]
        if len(R) < 8:
            continue
        P = min(len(v) for v in R)
        us = statistics.median(statistics.mean(v) for v in R)
        short = us < SHORT_US
        bar = 1.5 if short else 0.5
        cells = []
        for gpus in GPUS:
            kk = forced_k or processes_per_gpu(short, gpus)
            if kk > P:
                cells.append("   -  ")
                continue

            def night(R, rnd, gpus=gpus, kk=kk):
                return statistics.median(
                    statistics.mean(rnd.sample(rnd.choice(R), kk)) for _ in range(gpus))

            x = 100 * p90(night, R, rnd)
            over[gpus] += x > bar
            cells.append(f"{x:4.2f}/{kk}")
        n += 1
        print(f"{' '.join(key):48s} {us:8.2f} {bar:4.1f}  | " + " | ".join(cells))
    print(f"keys over their bar, of {n}: " +
          ", ".join(f"{g} GPU{'s' if g > 1 else ''} {over[g]}" for g in GPUS))


def main(argv):
    forced_k = None
    if argv[:1] == ["--k"] and len(argv) > 1 and argv[1].isdigit() and int(argv[1]) > 0:
        forced_k, argv = int(argv[1]), argv[2:]
    if not argv or any(a.startswith("-") for a in argv):
        print("usage: process_share_sim.py [--k K] RESULTS.csv ...  (--k: K processes on "
              "every GPU instead of kbench's share)", file=sys.stderr)
        return 2
    rnd = random.Random(5)
    try:
        for path in argv:
            table(path, rnd, forced_k)
    except (OSError, ValueError) as e:
        print(f"process_share_sim: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
