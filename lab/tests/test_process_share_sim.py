#!/usr/bin/env python3
"""lab/tools/process_share_sim.py on a made-up history: a launch-bound key whose
processes sit in one of two states 7% apart (40% slow) is under its 1.5%
bar as one GPU's mean of 9 and over it as the median of 2, 4 or 8 GPUs of
one process each (--k 1); the share of processes per GPU is kbench's (9,
9, 5, 3 under 20 us; 3, 3, 2, 1 above); a quiet 50 us key is under
everywhere; bad input exits 2 with one line."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tooltest import ToolTest  # noqa: E402

HEADER = "name,metric,actual,dtype,shape,status,median_us,run_id,message\n"
t = ToolTest("process_share_sim")
check = t.check


def counts(stdout):
    last = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    check(last.startswith("keys over their bar, of 2: "), f"summary line: {last!r}")
    return dict(part.rsplit(" ", 1) for part in last.split(": ", 1)[-1].split(", "))


rnd = random.Random(1)
rows = []
for i in range(24):
    short = [5.0 * (1.07 if rnd.random() < 0.4 else 1.0) * (1 + 0.001 * rnd.random()) for _ in range(9)]
    quiet = [50.0 * (1 + 0.002 * rnd.random()) for _ in range(3)]
    for shape, meds in (("D=1024", short), ("D=8192", quiet)):
        mean = sum(meds) / len(meds)
        text = ", ".join(f"{m:.3f}" for m in meds)
        msg = f"the mean of {len(meds)} worker processes' medians {text} us (spread 7.0%)"
        rows.append(f'gemv,memory_bandwidth(GB/s),{1e5 / mean},int8,{shape},ok,{mean},r{i},"{msg}"\n')
shared = t.run_on(HEADER + "".join(rows))
single = t.run_on(HEADER + "".join(rows), "--k", "1")
check(shared.returncode == 0, f"exit {shared.returncode}: {shared.stderr}")
check(single.returncode == 0, f"--k 1 exit {single.returncode}: {single.stderr}")
c = counts(shared.stdout)
check(c.get("1 GPU") == "0", f"one GPU, mean of 9: {c}")
c = counts(single.stdout)
check(c.get("2 GPUs") == "1" and c.get("4 GPUs") == "1" and c.get("8 GPUs") == "1",
      f"one process a GPU: {c}")


def shares(stdout, shape):
    line = next(l for l in stdout.splitlines() if f" {shape} " in l)
    return [cell.split("/")[1].strip() for cell in line.split("|")[1:]]


check(shares(shared.stdout, "D=1024") == ["9", "9", "5", "3"], f"short share: {shared.stdout}")
check(shares(shared.stdout, "D=8192") == ["3", "3", "2", "1"], f"long share: {shared.stdout}")

t.bad_input()
t.finish()
