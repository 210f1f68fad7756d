#!/usr/bin/env python3
"""The gate self-test replayed on a recorded history, without a GPU
(docs/decisions/0020-host-launch-rule.md): night k (k > --min-nights) is
gated with `kgate check` against the nights before it, as recorded (A/A),
then again with its rows made P% slower as `kbench run --inject-slowdown
'.*=P'` would make them (rates / (1 + P), times and median/min/max_us
x (1 + P), variant + ';inject=P%scaled'; the probe's rows, gemm_share (a
ratio of two slowed times) and compilation_time untouched). One attempt:
no re-measurement. Prints the A/A failing nights and keys, the injected
keys caught (failed) of those judged (not new, not the probe), and the keys
inconclusive for the host's launch (`host launch`). With --confirm N the
first stage's suspects (`--suspects`, no cap) are re-measured as
tools/nightly.sh would: the same keys' rows of the next N recorded runs
(fresh processes on the same board, minutes later; the last N nights are not
gated) become attempts 2..N+1; with --copies, N copies of tonight's own row
(the worst case: the night's noise all shared). Caught keys are also
counted by the key's noise class (`kgate noise`).

  lab/tools/gate-replay.py KGATE HISTORY.csv [PERCENT=5] [--min-nights 10] [--confirm N [--copies]]

Compare two kgate builds by running it with each.
"""
import csv
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def is_time(metric):
    return metric.endswith("(us)") or metric.endswith("(s)") or metric.endswith("(ms)")


def inject(rows, p):
    out = []
    for r in rows:
        r = dict(r)
        slowed = (r["name"] != "roofline_probe" and r["actual"]
                  and r["metric"] not in ("gemm_share", "compilation_time(s)"))
        if slowed:
            lower = is_time(r["metric"])
            for c in ("actual", "roofline_fraction"):
                if r.get(c):
                    v = float(r[c])
                    r[c] = repr(v * (1 + p) if lower else v / (1 + p))
            for c in ("median_us", "min_us", "max_us"):
                if r.get(c):
                    r[c] = repr(float(r[c]) * (1 + p))
            tag = "inject=%g%%scaled" % (p * 100)
            r["variant"] = r["variant"] + ";" + tag if r["variant"] else tag
        out.append(r)
    return out


def key_of(r):
    return (r["name"], r["dtype"], r["shape"], r["metric"], r["arch"])


def label_of(r):  # the key as kgate's JUnit names it
    return "%s [%s] %s %s @ %s" % (r["name"], r["shape"], r["dtype"], r["metric"], r["arch"])


# kgate check's --min-history: a key of fewer earlier runs is not the
# history rule's to judge (young: counted apart, as kgate selftest-table does).
MIN_HISTORY = 10


def check(kgate, header, rows, work, extra):
    path = os.path.join(work, "night.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows)
    rc = subprocess.run([kgate, "check", "--results", path] + extra,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    if rc not in (0, 1):
        sys.exit("gate-replay: kgate exited %d on %s" % (rc, path))
    return rc


def gate(kgate, header, before, tonight, work, again):
    junit = os.path.join(work, "night.xml")
    if again:
        sus = os.path.join(work, "suspects.csv")
        check(kgate, header, before + tonight, work, ["--suspects", sus, "--max-suspects", "1"])
        with open(sus, newline="") as f:
            keys = {key_of(r) for r in csv.DictReader(f)}
        run_id = tonight[0]["run_id"]
        tonight = tonight + [dict(r, run_id="%s/%d" % (run_id, a + 2)) for a, rows in
                             enumerate(again) for r in rows if key_of(r) in keys]
    rc = check(kgate, header, before + tonight, work, ["--junit", junit])
    verdicts = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        key = tc.get("classname")[len("kgate."):] + " " + tc.get("name")
        skipped = tc.find("skipped")
        if tc.find("failure") is not None or tc.find("error") is not None:
            verdicts[key] = "fail"
        elif skipped is not None:
            why = skipped.get("message") or ""
            verdicts[key] = ("host" if "host launches slower" in why
                             else "new" if "the history rule needs" in why
                             else "skipped" if why.startswith("skipped") else "inconclusive")
        else:
            verdicts[key] = "pass"
    return rc, verdicts


def main():
    args = sys.argv[1:]
    opts = {"--min-nights": 10, "--confirm": 0}
    for o in opts:
        if o in args:
            i = args.index(o)
            opts[o] = int(args[i + 1])
            del args[i:i + 2]
    min_nights, confirm = opts["--min-nights"], opts["--confirm"]
    copies = "--copies" in args
    if copies:
        args.remove("--copies")
    if len(args) not in (2, 3):
        sys.exit(__doc__)
    kgate, history = args[0], args[1]
    p = float(args[2]) / 100 if len(args) == 3 else 0.05
    with open(history, newline="") as f:
        rd = csv.DictReader(f)
        header, rows = rd.fieldnames, list(rd)
    runs, order = {}, []
    for r in rows:
        base = r["run_id"].split("/")[0]
        if base not in runs:
            runs[base] = []
            order.append(base)
        runs[base].append(r)
    order.sort(key=lambda b: runs[b][0]["timestamp"])
    noise_csv = tempfile.NamedTemporaryFile(suffix=".csv")
    subprocess.run([kgate, "noise", "--results", history, "--csv", noise_csv.name],
                   stdout=subprocess.DEVNULL, check=True)
    cls = {"%s [%s] %s %s @ %s" % (r["name"], r["shape"], r["dtype"], r["metric"], r["arch"]):
           r["noise_class"] for r in csv.DictReader(open(noise_csv.name, newline=""))}
    by_class = {}

    aa_nights = aa_keys = aa_host = judged = caught = drop_host = young = 0
    nights = []
    with tempfile.TemporaryDirectory() as work:
        first = lambda b: [r for r in runs[b] if "/" not in r["run_id"]]  # attempt 1
        for k in range(min_nights, len(order) - (0 if copies else confirm)):
            before = [r for b in order[:k] for r in runs[b]]
            earlier = {}
            for r in before:
                if "/" not in r["run_id"]:
                    earlier.setdefault(label_of(r), set()).add(r["run_id"])
            tonight = first(order[k])
            again = [tonight] * confirm if copies else [first(b) for b in order[k + 1:k + 1 + confirm]]
            rc, aa = gate(kgate, header, before, tonight, work, again)
            aa_nights += rc != 0
            if rc:
                print("  A/A night %d fails: %s" % (k + 1, ", ".join(
                    key for key, v in aa.items() if v == "fail")))
            aa_keys += sum(v == "fail" for v in aa.values())
            aa_host += sum(v == "host" for v in aa.values())
            _, dropped = gate(kgate, header, before, inject(tonight, p), work,
                              [inject(a, p) for a in again])
            j = c = 0
            for key, v in dropped.items():
                if key.startswith("roofline_probe ") or "gemm_share" in key or v in ("new", "skipped"):
                    continue
                if len(earlier.get(key, ())) < MIN_HISTORY:
                    young += 1
                    continue
                j += 1
                c += v == "fail"
                n = by_class.setdefault(cls.get(key, "?"), [0, 0])
                n[0] += v == "fail"
                n[1] += 1
            drop_host += sum(v == "host" for v in dropped.values())
            judged += j
            caught += c
            nights.append("%d:%d/%d" % (k + 1, c, j))
    print("%s: %d nights | A/A: %d failing nights, %d failing keys, %d host launch | "
          "%g%% injected: %d of %d keys caught (%.1f%%), %d host launch"
          % (os.path.basename(history), len(nights), aa_nights, aa_keys, aa_host, p * 100,
             caught, judged, 100.0 * caught / max(judged, 1), drop_host))
    print("  per night (caught/judged): " + " ".join(nights) +
          ("; not counted: %d key-nights of fewer than %d earlier runs" % (young, MIN_HISTORY)
           if young else ""))
    print("  caught by noise class: " + ", ".join(
        "%s %d/%d" % (c, n[0], n[1]) for c, n in sorted(by_class.items())))


if __name__ == "__main__":
    main()
