"""Does a microsecond kernel's cold time depend on where its input lies? (issue 46, repeatability)

On the round trip's small problems (KernelBench v0 sizes) the same answer's speedup spread up to
13% between evaluations while each evaluation's own median was precise to 1%, and the paired
rounds (each on inputs of its own) spread as much within one evaluation. This probe separates the
two suspects in one process, with torch alone: the same input timed again and again (drift over
time) against a new input each time, the earlier ones kept so that each lands elsewhere
(placement). Each timing is the median of SAMPLES cold samples (L2 flushed before each, CUDA
events around the call), as kagent's timer takes them.

usage: python3 bench/timing/placement_probe.py [--rows 16 --cols 16384 --reps 12]
prints one line per op: "placement_probe: OP same input: spread S (medians ...); new inputs: spread S (...)"
"""
import argparse
import statistics

import torch

SAMPLES = 400


def cold_median_us(fn, x, flush):
    start = [torch.cuda.Event(enable_timing=True) for _ in range(SAMPLES)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(SAMPLES)]
    for i in range(SAMPLES):
        flush.zero_()
        start[i].record()
        fn(x)
        end[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1000 for s, e in zip(start, end))


def spread(values):
    return max(values) / min(values)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=16)
    ap.add_argument("--cols", type=int, default=16384)
    ap.add_argument("--reps", type=int, default=12)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("placement_probe: SKIPPED: no GPU")
        return 77
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    ops = {"relu": torch.relu, "softsign": lambda x: x / (1 + torch.abs(x)), "sum": lambda x: torch.sum(x, dim=1)}
    for name, fn in ops.items():
        x = torch.randn(args.rows, args.cols, device="cuda")
        for _ in range(3):
            cold_median_us(fn, x, flush)  # warm: the kernel loaded, the clocks up
        same = [cold_median_us(fn, x, flush) for _ in range(args.reps)]
        kept = []
        fresh = []
        for _ in range(args.reps):
            kept.append(torch.randn(args.rows, args.cols, device="cuda"))
            kept.append(torch.empty(1 << 20, dtype=torch.uint8, device="cuda"))  # move the next one along
            fresh.append(cold_median_us(fn, kept[-2], flush))
        print(f"placement_probe: {name} {args.rows}x{args.cols}: same input: spread {spread(same):.3f} "
              f"(medians {' '.join(f'{v:.2f}' for v in same)} us); new inputs: spread {spread(fresh):.3f} "
              f"(medians {' '.join(f'{v:.2f}' for v in fresh)} us)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
