#!/usr/bin/env python3
"""lab/tools/process_stat_sim.py on a made-up history: a key with a whole-process
state (half the runs 0.9% slower) is over the bar as one process and as the
median of three, under it as the mean of three; a quiet key is under for
every statistic; bad input exits 2 with one line."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tooltest import ToolTest  # noqa: E402

HEADER = "name,metric,actual,dtype,shape,status,median_us,run_id,gpu_uuid\n"
t = ToolTest("process_stat_sim")
check = t.check

rows = []
for i in range(24):
    slow = i % 2 == 1  # a state of the whole process, one run in two
    us = (50.45 if slow else 50.0) + 0.01 * (i % 3)
    rows.append(f"gemv,memory_bandwidth(GB/s),{1e5 / us},int8,D=8192,ok,{us},r{i},GPU-a\n")
    quiet = 30.0 + 0.01 * (i % 5)
    rows.append(f"gemv,memory_bandwidth(GB/s),{1e5 / quiet},int8,D=4096,ok,{quiet},r{i},GPU-a\n")
p = t.run_on(HEADER + "".join(rows))
check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
check(last.startswith("board-keys over the bar, of 2: "), f"summary line: {last!r}")
counts = dict(part.rsplit(" ", 1) for part in last.split(": ", 1)[-1].split(", "))
check(counts.get("one process") == "1", f"one process: {counts}")
check(counts.get("median of 3") == "1", f"median of 3: {counts}")
check(counts.get("mean of 3") == "0", f"mean of 3: {counts}")

t.bad_input()
t.finish()
