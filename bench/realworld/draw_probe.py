"""Where a worker's prefetch goes on the problems whose trials cost most to draw (issue 46).

A worker draws a problem's correctness trials as KernelBench's harness does (the CPU's generator,
seed by seed), then keeps each draw in page-locked memory that forks do not inherit
(kagent_worker/host_memory.py: an anonymous mapping, MADV_DONTFORK, cudaHostRegister). On the
leaderboard's 149 answers the ten largest draws took 2.5-3.9 s each, most of a collection's
prefetch (bench/realworld/RESULTS.md, thirty-seventh session). This probe splits one problem's
prefetch into its steps, for the problems with the largest trial inputs, in this process:
  draw      kernelbench_seed + get_inputs() for each of the 5 trial seeds (the generator);
  copy      into the mapping, three ways: as host_memory.dontfork_copy does it (page faults on
            the copy), with MAP_POPULATE (the kernel faults the mapping in at once), and with
            MADV_HUGEPAGE before the copy (2 MiB pages: 512 times fewer faults);
  register  cudaHostRegister of each kept set (it walks every page too);
  h2d       one evaluation's copies of the 5 sets to the GPU, from the registered mapping and from
            the draw's own pageable memory: what the page-locking buys per evaluation.
Every copy is checked equal to its draw. The draws are the worker's own numbers (seed 42, the
trials' seeds as kagent_worker.problem.trial_seeds derives them).

usage: python3 bench/realworld/draw_probe.py [--problems DIR] [--largest 10] [--seed 42] [--trials 5]
prints one line per problem, "draw_probe: NAME MiB: draw ...", and a last "draw_probe: sums ..." line
(without a GPU: the draw and the copies only)
"""
import argparse
import mmap
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "worker", "python"))
from kagent_worker import host_memory  # noqa: E402
from kagent_worker.problem import CPU_TRIAL_INPUT_BYTES, Problem, kernelbench_seed, tensor_bytes, trial_seeds  # noqa: E402

MADV_HUGEPAGE = getattr(mmap, "MADV_HUGEPAGE", 14)


def mapped_copy(x, way):
    """`x` copied into an anonymous MADV_DONTFORK mapping, its pages faulted in `way`."""
    if way == "plain":
        return host_memory.dontfork_copy(x)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | (mmap.MAP_POPULATE if way == "populate" else 0)
    buf = mmap.mmap(-1, x.nbytes, flags=flags)
    if way == "hugepage":
        buf.madvise(MADV_HUGEPAGE)
    buf.madvise(mmap.MADV_DONTFORK)
    out = torch.frombuffer(buf, dtype=x.dtype, count=x.numel()).view(x.shape)
    out.copy_(x)
    return out


def register(tensors):
    """cudaHostRegister each tensor's memory; the seconds it took and the pointers to unregister."""
    cudart = torch.cuda.cudart()
    start = time.perf_counter()
    done = []
    for t in tensors:
        if int(cudart.cudaHostRegister(t.data_ptr(), t.nbytes, 0)) != 0:
            raise RuntimeError("cudaHostRegister failed")
        done.append(t.data_ptr())
    return time.perf_counter() - start, done


def unregister(ptrs):
    cudart = torch.cuda.cudart()
    for p in ptrs:
        cudart.cudaHostUnregister(p)


def h2d_seconds(sets):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for inputs in sets:
        for x in inputs:
            x.to("cuda", copy=True)
    torch.cuda.synchronize()
    return time.perf_counter() - start


def trial_bytes(problem):
    torch.manual_seed(0)
    with torch.device("meta"):
        return tensor_bytes(list(problem._call("get_inputs")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", default=".carry/realworld/kb_leaderboard/problems")
    ap.add_argument("--largest", type=int, default=10)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args()
    gpu = torch.cuda.is_available()
    if not gpu:
        print("draw_probe: no CUDA device: the draws and copies only (register and h2d need one)")
    # One problem per text (the leaderboard's 149 files are 99 texts), the largest trial inputs
    # the worker draws on the CPU (above CPU_TRIAL_INPUT_BYTES it draws on the GPU).
    by_text = {}
    for name in sorted(os.listdir(args.problems)):
        if not name.endswith(".py"):
            continue
        try:
            p = Problem(os.path.join(args.problems, name))
            size = trial_bytes(p)
        except Exception as exc:  # noqa: BLE001 - a problem that cannot load is left out, and said
            print(f"draw_probe: {name}: left out: {exc}")
            continue
        if size <= CPU_TRIAL_INPUT_BYTES:
            by_text.setdefault(p.sha256, (size, name, p))
    chosen = sorted(by_text.values(), key=lambda e: -e[0])[: args.largest]
    sums = {}
    ways = ("plain", "populate", "hugepage")
    for size, name, p in chosen:
        row = {}
        seeds = trial_seeds(args.seed, args.trials)
        start = time.perf_counter()
        draws = []
        for s in seeds:
            kernelbench_seed(s)
            draws.append([x for x in p._call("get_inputs") if isinstance(x, torch.Tensor)])
        row["draw"] = time.perf_counter() - start
        for way in ways:
            start = time.perf_counter()
            kept = [[mapped_copy(x, way) for x in inputs] for inputs in draws]
            row[f"copy {way}"] = time.perf_counter() - start
            if not all(torch.equal(a, b) for ka, da in zip(kept, draws) for a, b in zip(ka, da)):
                raise SystemExit(f"draw_probe: {name}: the {way} copy differs from its draw")
            if gpu:
                row[f"register {way}"], ptrs = register([x for inputs in kept for x in inputs])
                if way == "plain":
                    row["h2d pinned"] = h2d_seconds(kept)
                unregister(ptrs)
            del kept
        if gpu:
            row["h2d pageable"] = h2d_seconds(draws)
        for k, v in row.items():
            sums[k] = sums.get(k, 0.0) + v
        print(f"draw_probe: {name} {args.trials} x {size / 2**20:.0f} MiB: "
              + ", ".join(f"{k} {v:.3f} s" for k, v in row.items()), flush=True)
        del draws
    print("draw_probe: sums over " + f"{len(chosen)} problems: " + ", ".join(f"{k} {v:.2f} s" for k, v in sums.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
