#!/usr/bin/env python3
"""Issue 17's acceptance figures from one kbench results CSV (stdlib only).

  lab/tools/roofline_report.py NEW.csv [--base OLD.csv] [--run RUN_ID]

Prints: the largest roofline_fraction of the run (must be <= 1.02), the
probe's ideal kernels (roofline_ideal: the best kernel of ours per kind of
traffic and size must be >= 0.97), the gemm_share rows, and, with --base,
every row whose fraction moved by more than 0.05 against BASE (same name,
metric, dtype, shape; BASE's newest run of the same GPU model).
Exit 0 when both bounds hold, 1 otherwise, 2 on bad input.
"""
import argparse
import csv
import sys


def rows_of(path, run=None):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"{path}: {e}")
    if not rows or "roofline_fraction" not in rows[0]:
        print(f"{path}: not a kbench results CSV", file=sys.stderr)
        sys.exit(2)
    ids = [r["run_id"] for r in rows if r.get("run_id")]
    run = run or (ids[-1] if ids else None)
    return [r for r in rows if r.get("run_id") == run], run


def frac(r):
    try:
        return float(r["roofline_fraction"])
    except (KeyError, ValueError):
        return None


def shape_of(r):
    """The row's shape; roofline_ideal's rows of older suites (`bytes=N`,
    the kernel only in the variant) as they are written since
    (`bytes=N;kernel=K`, docs/metrics.md), so that --base reads either."""
    s = r["shape"]
    if r["name"] == "roofline_ideal" and "kernel=" not in s:
        s += ";kernel=" + r["variant"].split(";")[0]
    return s


def bytes_of(shape):
    return int(dict(f.split("=", 1) for f in shape.split(";"))["bytes"])


def key(r):
    return (r["name"], r["metric"], r["dtype"], shape_of(r))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("new")
    ap.add_argument("--base")
    ap.add_argument("--run", help="run_id in NEW (default: its last)")
    a = ap.parse_args()
    rows, run = rows_of(a.new, a.run)
    arch = rows[0]["arch"] if rows else "?"
    ok = True
    print(f"run {run} on {arch}, suite {rows[0]['suite_version'] if rows else '?'}: {len(rows)} rows")
    model = [r for r in rows if "roofline=model" in r.get("message", "")]
    if model:
        print(f"  {len(model)} rows on roofline version 1 (no ladder): {model[0]['message']}")

    measured = [r for r in rows if frac(r) is not None and r["name"] != "roofline_probe"]
    top = sorted(measured, key=lambda r: -frac(r))[:8]
    print("\nlargest roofline_fraction (bound: <= 1.02)")
    for r in top:
        print(f"  {frac(r):.3f}  {r['name']} {r['shape']} {r['dtype']} {r['metric']}"
              f"  {r['variant'][:50]}")
    if top and frac(top[0]) > 1.02:
        ok = False

    ideal = [r for r in rows if r["name"] == "roofline_ideal" and frac(r) is not None]
    print("\nroofline_ideal: the probe's ideal kernels (best of ours per kind: >= 0.97)")
    kinds = {"read": ["read_sweep", "read_chunks"],
             "copy": ["copy_sweep", "copy_chunks", "copy_wave"],
             "x8_stream": ["read_chunks_x8_stream"], "x8_graph": ["read_chunks_x8_graph"]}
    # Per kernel and size (the shape names both: bytes=N;kernel=K).
    by = {(r["variant"].split(";")[0], bytes_of(r["shape"])): frac(r) for r in ideal}
    sizes = sorted({b for _, b in by})
    for kind, variants in kinds.items():
        for b in sizes:
            got = {v: by[(v, b)] for v in variants if (v, b) in by}
            if not got:
                continue
            best = max(got.values())
            memcpy = by.get(("copy_memcpy", b)) if kind == "copy" else None
            flag = "" if best >= 0.97 else "   <-- below 0.97"
            ok = ok and best >= 0.97
            extra = f" (cudaMemcpy {memcpy:.3f})" if memcpy is not None else ""
            s = f"bytes={b}"
            print(f"  {kind:10s} {s:18s} best {best:.3f}  "
                  + " ".join(f"{v}={x:.3f}" for v, x in got.items()) + extra + flag)
    if not ideal:
        print("  none in this run")
        ok = False

    print("\ngemm_share (mlp_layer_norm_gelu)")
    for r in rows:
        if r["name"] == "mlp_layer_norm_gelu" and r["metric"] == "gemm_share":
            print(f"  {r['shape']:22s} {r['actual'] or '-':>8.8s}  target {r['target'] or '-':6.6s}"
                  f" {r['status']}  {r['message'][:60]}")

    if a.base:
        base_rows, base_run = rows_of(a.base)
        base = {key(r): r for r in base_rows if r["arch"] == arch}
        print(f"\nrows whose fraction moved by more than 0.05 against {a.base} ({base_run})")
        print("  old    new    change  row")
        for r in measured:
            b = base.get(key(r))
            if b is None or frac(b) is None:
                continue
            d = frac(r) - frac(b)
            if abs(d) > 0.05:
                print(f"  {frac(b):.3f}  {frac(r):.3f}  {d:+.3f}  {r['name']} {r['shape']}"
                      f" {r['dtype']} {r['metric']}  {r['variant'][:40]}")
    print("\n" + ("OK: bounded and attained" if ok else "NOT OK (see above)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
