#!/usr/bin/env python3
"""Which statistic over worker processes holds a key still from run to run?

Resamples the runs of recorded histories (each run one worker process per
experiment, the build unchanged within a file) as the processes of new runs:
for each board and rate key with 8 or more runs, 300 windows of 20 runs, each
run the statistic of N processes drawn from the key's runs. A key is over
when the 90th percentile of its windows' run-to-run noise (1.4826 * MAD /
median over the 20 runs) exceeds the bar (0.5% where its median_us is 20 us
or more, 1.5% under), as `kgate noise` judges 20 real runs.

  lab/tools/process_stat_sim.py HISTORY.csv ...

docs/decisions/0005-mean-of-three-worker-processes.md has the table this printed.
"""
import collections
import csv
import random
import statistics
import sys

STATS = {  # name: (processes per run, statistic of their sorted values)
    "one process": (1, lambda s: s[0]),
    "median of 3": (3, lambda s: s[1]),
    "mean of middle 2 of 4": (4, lambda s: (s[1] + s[2]) / 2),
    "mean of 3": (3, lambda s: sum(s) / 3),
    "mean of middle 3 of 5": (5, lambda s: sum(s[1:4]) / 3),
}


def noise(v):
    m = statistics.median(v)
    return 1.4826 * statistics.median([abs(x - m) for x in v]) / m


def main(paths):
    rnd = random.Random(2)
    over = collections.Counter()
    keys = 0
    for path in paths:
        boards = collections.defaultdict(lambda: collections.defaultdict(dict))
        timed = {}
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            if r["status"] not in ("ok", "below_target") or not r["actual"]:
                continue
            if r["shape"] == "mean" or r["name"] == "roofline_probe":
                continue
            if r["name"] == "mlp_layer_norm_gelu" and r["metric"] not in ("tflops", "gemm_share"):
                continue  # the same time as its tflops row
            k = (r["name"], r["shape"], r["dtype"], r["metric"])
            boards[r.get("gpu_uuid", "")][k][r["run_id"]] = float(r["actual"])
            if r["median_us"]:
                timed[k] = float(r["median_us"])
        for board, ks in boards.items():
            per = collections.Counter()
            for k, runs in ks.items():
                v = list(runs.values())
                if len(v) < 8:
                    continue
                keys += 1
                bar = 0.005 if timed.get(k, 0) >= 20 else 0.015
                for name, (n, f) in STATS.items():
                    w = sorted(noise([f(sorted(rnd.sample(v, n))) for _ in range(20)])
                               for _ in range(300))
                    if w[int(0.9 * len(w))] > bar:
                        per[name] += 1
                        over[name] += 1
            if per or any(len(v) >= 8 for v in ks.values()):
                print(f"{path} {board[:12]}: " + ", ".join(f"{n} {per[n]}" for n in STATS))
    print(f"board-keys over the bar, of {keys}: " + ", ".join(f"{n} {over[n]}" for n in STATS))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: lab/tools/process_stat_sim.py HISTORY.csv ...", file=sys.stderr)
        sys.exit(2)
    try:
        main(sys.argv[1:])
    except (OSError, KeyError, ValueError) as e:
        what = f"missing column {e}" if isinstance(e, KeyError) else str(e)
        print(f"process_stat_sim: {what} (a kbench results CSV is expected)", file=sys.stderr)
        sys.exit(2)
