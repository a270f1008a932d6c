"""What a timing sample is worth when the CPU is busy (docs/evaluation.md, "Timing").

KernelBench level 1 problem 88's reference (MinGPT's GELU, seven elementwise ops at the
leaderboard's size, 2000 x 2000) timed as kagent's timer does: L2 flushed, the stream idle, CUDA
events around one call. Two kinds of sample, as `--timing-sample launch` and `gpu`:
  launch  start event, the call, end event: the host's pace of issuing the ops is in the sample;
  gpu     a spin kernel (torch.cuda._sleep) ahead of the start event keeps the GPU busy while the
          host issues the call, so the ops run back to back: the GPU's time alone.
Each kind with the CPU idle, then with every core busy (as under `kagent serve` with compiles
and other workers beside the timing). One line per condition; run it in two processes to see
the spread between processes too:
  python3 bench/timing/sample_probe.py [--samples 300] [--size 2000]
"""
import argparse
import math
import multiprocessing as mp
import os
import statistics
import time

import torch


def burn(stop):
    while not stop.is_set():
        pass


def model(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def measure(x, flush, hold_cycles, samples):
    out = []
    for _ in range(samples):
        flush.zero_()
        torch.cuda.synchronize()
        if hold_cycles:
            torch.cuda._sleep(hold_cycles)
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        a.record()
        model(x)
        b.record()
        issue = time.perf_counter() - t0
        b.synchronize()
        out.append((a.elapsed_time(b) * 1e3, issue * 1e6))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--size", type=int, default=2000)
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    x = torch.rand(args.size, args.size, device="cuda")
    flush = torch.empty(2 * props.L2_cache_size // 4, dtype=torch.float32, device="cuda")
    hold = int(300e-6 * 2.0e9)  # ~300 us of spinning at ~2 GHz: longer than issuing seven ops
    for _ in range(20):
        model(x)
    torch.cuda.synchronize()
    rows = []
    for busy in (False, True):
        stop, burners = mp.Event(), []
        if busy:
            burners = [mp.Process(target=burn, args=(stop,), daemon=True) for _ in range(os.cpu_count() or 1)]
            for p in burners:
                p.start()
            time.sleep(0.5)
        for kind, cycles in (("launch", 0), ("gpu", hold)):
            s = measure(x, flush, cycles, args.samples)
            ev = sorted(v for v, _ in s)
            iss = sorted(i for _, i in s)
            rows.append((kind, busy, statistics.median(ev), ev[len(ev) // 10], ev[9 * len(ev) // 10], statistics.median(iss)))
        stop.set()
        for p in burners:
            p.join()
    for kind, busy, med, p10, p90, iss in rows:
        print(f"sample_probe: pid {os.getpid()} {kind:<6} cpu {'busy' if busy else 'idle'}: median {med:7.1f} us "
              f"(p10 {p10:7.1f}, p90 {p90:7.1f}), issue {iss:6.1f} us", flush=True)


if __name__ == "__main__":
    main()
