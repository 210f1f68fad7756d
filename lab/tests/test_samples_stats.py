#!/usr/bin/env python3
"""lab/tools/samples_stats.py on small files whose figures are worked out by hand."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "lab", "tools", "samples_stats.py")


def run(text, *args):
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(text)
    try:
        p = subprocess.run([sys.executable, TOOL, f.name, *args], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return p.returncode, p.stdout, p.stderr


def samples(run_id, point, values):
    return "".join(f"{run_id},{point},{i},{i % 2},{v}\n" for i, v in enumerate(values))


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# Three runs whose medians are 10, 11 and 12 us: noise of the median =
# 1.4826 * median(|10-11|, 0, |12-11|) / 11 = 1.4826 / 11 = 13.48%.
# Their minima are all 9: noise of the minimum 0.00%.
text = (samples("r1", "gemv D=1 int8", [9, 10, 11]) + samples("r2", "gemv D=1 int8", [9, 11, 13])
        + samples("r3", "gemv D=1 int8", [9, 12, 15]) + samples("r1", "other", [5, 5]))
rc, out, err = run(text)
check(rc == 0, f"exit {rc}: {err}")
line = next((l for l in out.splitlines() if l.startswith("gemv D=1 int8")), "")
cells = line.split("|")[-1].split() if line else []
check(len(cells) == 5, f"five statistics expected: {line!r}")
if len(cells) == 5:
    check(cells[0] == "13.48%", f"median's noise {cells[0]}, expected 13.48%")
    check(cells[4] == "0.00%", f"minimum's noise {cells[4]}, expected 0.00%")
check("other" not in out, "a point seen in one run is left out at --min-runs 3")
check(" 3 " in line, f"three runs expected: {line!r}")

# --points filters; a point with too few runs alone gives exit 1.
rc, out, err = run(text, "--points", "^other$")
check(rc == 1 and "no point" in err, f"--points other: exit {rc}, {err!r}")

# Bad input: one message, exit 2, no traceback.
for bad, what in [("r1,p,0,0\n", "fields"), ("r1,p,0,0,abc\n", "not a time"), ("r1,p,0,0,-1\n", "positive")]:
    rc, out, err = run(bad)
    check(rc == 2 and what in err and "Traceback" not in err, f"bad input {bad!r}: exit {rc}, {err!r}")
p = subprocess.run([sys.executable, TOOL, "/nonexistent/samples.csv"], capture_output=True, text=True)
check(p.returncode == 2 and "samples_stats:" in p.stderr, f"missing file: exit {p.returncode}")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("ok")
