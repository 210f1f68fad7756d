#!/usr/bin/env python3
"""PyTorch's all_reduce / all_gather through NCCL on this host, measured as
kbench's nccl_all_reduce / nccl_all_gather rows are (docs/scale.md): bf16,
hidden 4096 x 1..16 tokens (8-128 KiB, latency in us) and 256 MiB, 1 GiB
(algbw and busbw as nccl-tests defines them), the median of timed samples
of back-to-back calls (50 a sample at 8-128 KiB, 20 at the large sizes),
the slowest rank's time. Each sample's calls run eagerly (mode eager: each
call launched from Python) and captured once in a CUDA graph replayed per
sample (mode graph: as kbench times its rows, and as a decode step that
replays its graph pays). Run it in the same session as `kbench run
--device all --filter nccl` to compare the two.

NVLink multicast stays off: NCCL_NVLS_ENABLE=0 (and PyTorch's
TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1) are set before
torch is imported, in this process and in the ranks it starts.

  python3 lab/tools/torch_allreduce.py [--gpus N] [--op all_reduce|all_gather|both]
                                   [--mode eager|graph|both] [--csv FILE]
"""
import os

os.environ["NCCL_NVLS_ENABLE"] = "0"  # before torch/NCCL is loaded: never NVLink multicast
# PyTorch's symmetric memory and NVSHMEM have multicast paths of their own: off too.
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"

import argparse
import csv
import datetime
import statistics
import sys

SMALL = [4096 * 2 * t for t in (1, 2, 4, 8, 16)]
LARGE = [256 << 20, 1 << 30]


def bus_factor(op, n):
    return 2.0 * (n - 1) / n if op == "all_reduce" else (n - 1) / n


def worker(rank, n, port, ops, modes, out_path):
    import torch
    import torch.distributed as dist

    os.environ["NCCL_NVLS_ENABLE"] = "0"
    torch.cuda.set_device(rank)
    dist.init_process_group(
        "nccl",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=n,
        timeout=datetime.timedelta(seconds=120),  # a hang becomes an error
    )
    rows = []
    graphs = []  # kept alive until every rank has finished
    for op in ops:
        for size in SMALL + LARGE:
            small = size in SMALL
            if op == "all_reduce":
                buf = torch.full((size // 2,), float(rank + 1), dtype=torch.bfloat16, device="cuda")
                run = lambda: dist.all_reduce(buf)
            else:
                per = size // 2 // n
                size = per * 2 * n
                src = torch.full((per,), float(rank + 1), dtype=torch.bfloat16, device="cuda")
                dst = torch.empty((per * n,), dtype=torch.bfloat16, device="cuda")
                run = lambda: dist.all_gather_into_tensor(dst, src)
            iters = 50 if small else 20  # as kbench: calls per sample
            samples = 20 if small else 10
            for _ in range(5 * iters):
                run()
            torch.cuda.synchronize()
            for mode in modes:
                if mode == "graph":  # the iters captured once, one replay a sample (as kbench)
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        for _ in range(iters):
                            run()
                    sample = graph.replay
                    graphs.append(graph)
                else:
                    def sample():
                        for _ in range(iters):
                            run()
                for _ in range(3):
                    sample()
                torch.cuda.synchronize()
                times = []
                for _ in range(samples):
                    start = torch.cuda.Event(enable_timing=True)
                    stop = torch.cuda.Event(enable_timing=True)
                    dist.barrier()
                    torch.cuda.synchronize()
                    start.record()
                    sample()
                    stop.record()
                    torch.cuda.synchronize()
                    t = torch.tensor([start.elapsed_time(stop) / 1e3 / iters], device="cuda")
                    dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank's time
                    times.append(t.item())
                med = statistics.median(times)
                algbw = size / med / 1e9
                rows.append(
                    {
                        "op": op,
                        "mode": mode,
                        "bytes": size,
                        "ranks": n,
                        "time_us": med * 1e6,
                        "algbw_gbps": algbw,
                        "busbw_gbps": algbw * bus_factor(op, n),
                    }
                )
    if rank == 0:
        print(f"torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
              f"{n} x {torch.cuda.get_device_name(0)}, NCCL_NVLS_ENABLE={os.environ['NCCL_NVLS_ENABLE']}")
        print(f"{'op':>10} {'mode':>6} {'bytes':>12} {'time(us)':>10} {'algbw(GB/s)':>12} {'busbw(GB/s)':>12}")
        for r in rows:
            print(f"{r['op']:>10} {r['mode']:>6} {r['bytes']:>12} {r['time_us']:>10.2f} {r['algbw_gbps']:>12.2f} "
                  f"{r['busbw_gbps']:>12.2f}")
        if out_path:
            with open(out_path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
                w.writeheader()
                w.writerows(rows)
    # With captured graphs alive, destroy_process_group() hung on 4x H100
    # (torch 2.11: the rows written, the script killed at its
    # 150 s limit): every rank finishes its GPU work and meets the others,
    # then the process ends without NCCL's teardown.
    torch.cuda.synchronize()
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, default=0, help="ranks (default: every GPU)")
    ap.add_argument("--op", choices=["all_reduce", "all_gather", "both"], default="both")
    ap.add_argument("--mode", choices=["eager", "graph", "both"], default="both",
                    help="eager calls, or the calls of a sample captured in a CUDA graph (as kbench times them)")
    ap.add_argument("--csv", default="", help="also write the table as CSV")
    ap.add_argument("--port", type=int, default=29533)
    a = ap.parse_args()
    import torch
    import torch.multiprocessing as mp

    n = a.gpus or torch.cuda.device_count()
    if n < 2:
        print(f"torch_allreduce: needs 2 or more GPUs, found {torch.cuda.device_count()}", file=sys.stderr)
        return 2
    ops = ["all_reduce", "all_gather"] if a.op == "both" else [a.op]
    modes = ["eager", "graph"] if a.mode == "both" else [a.mode]
    mp.spawn(worker, args=(n, a.port, ops, modes, a.csv), nprocs=n, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
