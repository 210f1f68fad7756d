#!/usr/bin/env python3
"""torch.compile at the seed's micro shapes, written as kbench rows.

  python3 tools/peers/torch_peers.py --csv peers.csv [--protocol cold|hot]
      [--samples 200] [--filter REGEX]

The same computations as kbench's seed micro rows, compiled, timed on the
GPU and appended to CSV in kbench's schema for `kgate compare`; exit 3
without PyTorch and CUDA (docs/bringup.md "Peers: torch.compile in the
same lease").
"""
import argparse
import csv
import datetime
import os
import re
import statistics
import sys
import time

HEADER = ("name,metric,target,actual,dtype,device,arch,is_model,shape,variant,status,samples,"
          "median_us,min_us,max_us,noise_rel,roofline,roofline_fraction,sm_clock_mhz,"
          "mem_clock_mhz,driver,cuda,suite_version,git_sha,run_id,timestamp,message,gpu_index,"
          "gpu_uuid,gpu_bus_id,host").split(",")
SEED_D = (1024, 4096, 8192, 16384)
MLP_HIDDEN = 14336  # kernels/mlp/mlp.h kHidden
EXPERTS, CHOSEN = 8, (3, 5)


def cases(torch):
    """(name, dtype, shape, bytes, make) for every seed micro point; make() -> fn."""
    F = torch.nn.functional
    bf16, dev = torch.bfloat16, "cuda"

    def layer_norm(d):
        x = torch.randn(4096, d, dtype=bf16, device=dev)
        g = torch.rand(d, dtype=bf16, device=dev) + 0.5
        b = torch.rand(d, dtype=bf16, device=dev) - 0.5
        f = torch.compile(lambda x, g, b: F.layer_norm(x, (d,), g, b, 1e-5), dynamic=False)
        return lambda: f(x, g, b)

    def weights(shape, int8):
        if int8:
            w = torch.randint(-127, 128, shape, dtype=torch.int8, device=dev)
            s = (torch.rand(shape[:-1], dtype=bf16, device=dev) + 0.5) / 64
            return w, s
        return torch.randn(shape, dtype=bf16, device=dev) / 32, None

    def gemv(d, int8):
        w, s = weights((d, d), int8)
        x = torch.randn(d, dtype=bf16, device=dev)
        if int8:
            f = torch.compile(lambda w, s, x: (w.to(bf16) @ x) * s, dynamic=False)
            return lambda: f(w, s, x)
        f = torch.compile(lambda w, x: w @ x, dynamic=False)
        return lambda: f(w, x)

    def gather_gemv(d, int8):
        w, s = weights((EXPERTS, d, d), int8)
        x = torch.randn(d, dtype=bf16, device=dev)
        ids = torch.tensor(CHOSEN, dtype=torch.int64, device=dev)
        if int8:
            f = torch.compile(lambda w, s, i, x: (w[i].to(bf16) @ x) * s[i], dynamic=False)
            return lambda: f(w, s, ids, x)
        f = torch.compile(lambda w, i, x: w[i] @ x, dynamic=False)
        return lambda: f(w, ids, x)

    def mlp(d):
        n = torch.nn
        m = n.Sequential(n.Linear(d, MLP_HIDDEN), n.LayerNorm(MLP_HIDDEN), n.GELU(),
                         n.Linear(MLP_HIDDEN, d), n.LayerNorm(d)).to(dev, bf16)
        x = torch.randn(1, d, dtype=bf16, device=dev)
        f = torch.compile(m, dynamic=False)
        return lambda: f(x)

    def gemv_bytes(d, int8, sel):  # suite/experiments/gemv_case.h gemv_work
        return sel * d * d * (1 if int8 else 2) + (sel * d * 2 if int8 else 0) + d * 2 + sel * d * 2

    def mlp_bytes(d, t=1):  # suite/experiments/mlp_layer_norm_gelu.cu work
        Fh = MLP_HIDDEN
        return 2 * d * Fh * 2 + 3 * (Fh + d) * 2 + 2 * t * d * 2 + 2 * (2 * t * Fh * 2) + 2 * t * d * 2

    out = [("layer_norm", "bfloat16", f"BS=4096;D={d}", 2 * 4096 * d * 2, lambda d=d: layer_norm(d))
           for d in SEED_D]
    for int8 in (True, False):
        dt = "int8" if int8 else "bfloat16"
        out += [("gemv", dt, f"D={d}", gemv_bytes(d, int8, 1), lambda d=d, i=int8: gemv(d, i))
                for d in SEED_D]
        out += [("gather_gemv", dt, f"D={d}", gemv_bytes(d, int8, 2),
                 lambda d=d, i=int8: gather_gemv(d, i)) for d in SEED_D]
    out += [("mlp_layer_norm_gelu", "bfloat16", f"tokens=1;D={d}", mlp_bytes(d), lambda d=d: mlp(d))
            for d in SEED_D]
    return out


def time_samples(torch, fn, protocol, samples, flush):
    for _ in range(10):  # warm-up (and compilation)
        fn()
    torch.cuda.synchronize()
    us = []
    for start in range(0, samples, 50):
        n = min(50, samples - start)
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(n)]
        # The GPU waits while the CPU queues the batch (nvbench's blocking
        # kernel): a sample then times the GPU's work, not Python's dispatch.
        torch.cuda._sleep(40_000_000)
        for a, b in ev:
            if protocol == "cold":
                flush.sum()  # reads twice the L2: nothing of fn's inputs stays in it
            a.record()
            fn()
            b.record()
        torch.cuda.synchronize()
        us += [a.elapsed_time(b) * 1e3 for a, b in ev]
    return us


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", required=True, help="rows appended here (header written if new)")
    ap.add_argument("--protocol", default="cold", choices=("cold", "hot"))
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--filter", default="", help="regex on name;dtype;shape")
    args = ap.parse_args()
    if args.samples < 5:
        ap.error("--samples must be 5 or more")
    try:
        import torch
    except ImportError:
        print("torch_peers: PyTorch is not installed", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_peers: no CUDA device", file=sys.stderr)
        return 3
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 64 << 20)
    flush = torch.empty(max(2 * l2, 8 << 20) // 4, dtype=torch.float32, device="cuda").fill_(1)
    now = datetime.datetime.now(datetime.timezone.utc)
    common = dict(device="cuda", arch=props.name, is_model="False", status="ok",
                  metric="memory_bandwidth(GB/s)", variant="torch.compile;" + args.protocol,
                  cuda=torch.version.cuda or "", suite_version="torch-" + torch.__version__,
                  run_id=now.strftime("%Y%m%dT%H%M%SZ") + "-peers",
                  timestamp=now.strftime("%Y-%m-%dT%H:%M:%SZ"), gpu_index="0",
                  gpu_uuid=str(getattr(props, "uuid", "")), host=os.uname().nodename)
    rows, means = [], {}
    rx = re.compile(args.filter) if args.filter else None
    for name, dtype, shape, nbytes, make in cases(torch):
        if rx and not rx.search(f"{name};{dtype};{shape}"):
            continue
        t0 = time.time()
        fn = make()
        us = time_samples(torch, fn, args.protocol, args.samples, flush)
        med = statistics.median(us)
        q1, _, q3 = statistics.quantiles(us, n=4)
        gbs = nbytes / med / 1e3
        rows.append(dict(common, name=name, actual=repr(gbs), dtype=dtype, shape=shape,
                         samples=str(len(us)), median_us=repr(med), min_us=repr(min(us)),
                         max_us=repr(max(us)), noise_rel=repr((q3 - q1) / 2 / med)))
        means.setdefault((name, dtype), []).append(gbs)
        print(f"{name:20s} {dtype:9s} {shape:16s} {args.protocol:4s} {med:9.2f} us "
              f"{gbs:8.1f} GB/s  ({time.time() - t0:.1f} s)", flush=True)
        del fn
        torch.cuda.empty_cache()
    for (name, dtype), v in means.items():
        if len(v) == len(SEED_D):  # the seed's mean over its four D points
            rows.append(dict(common, name=name, actual=repr(sum(v) / len(v)), dtype=dtype,
                             shape="mean", samples="0"))
    new = not os.path.exists(args.csv) or os.path.getsize(args.csv) == 0
    with open(args.csv, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER, restval="")
        if new:
            w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} rows appended to {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
