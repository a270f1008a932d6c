"""Which estimate of a microsecond speedup repeats between evaluations? (issue 46, repeatability)

placement_probe.py showed that a microsecond kernel's time depends on where its input lies. Here,
with torch alone, each of EVALS evaluations is a process of its own, as kagent's workers are: it
times a reference and a "candidate" (another way to compute the same) in ROUNDS paired rounds, each
round on inputs of its own (kept, so that each lands elsewhere), the order alternating, as
kagent's --speedup-rounds does (tools/worker/service/evaluation.cpp). Over the evaluations it
prints, per pair, how far three estimates spread (largest over smallest): the first round alone
(one placement, as a single timing sees), the rounds' median, and their geometric mean.

usage: python3 bench/timing/rounds_probe.py [--evals 6 --rounds 5 --rows 16 --cols 16384]
prints one line per pair: "rounds_probe: PAIR: spread over N evaluations: first round S, median S, geometric mean S"
"""
import argparse
import json
import math
import statistics
import subprocess
import sys

# (name, reference, candidate): each pair computes the same thing two ways.
PAIRS = {
    "relu": ("torch.relu(x)", "x.clamp_min(0)"),
    "softsign": ("x / (1 + torch.abs(x))", "torch.nn.functional.softsign(x)"),
    "rowsum": ("torch.sum(x, dim=1)", "torch.einsum('ij->i', x)"),
}


def one_evaluation(rounds, rows, cols):
    import torch  # only the children need it
    from placement_probe import cold_median_us  # the same cold samples (this script's folder is on the path)

    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    out = {}
    for name, (ref, cand) in PAIRS.items():
        f_ref = eval("lambda x: " + ref, {"torch": torch})
        f_cand = eval("lambda x: " + cand, {"torch": torch})
        warm = torch.randn(rows, cols, device="cuda")
        for _ in range(2):
            cold_median_us(f_ref, warm, flush), cold_median_us(f_cand, warm, flush)
        kept, ratios = [], []
        for i in range(rounds):
            kept.append(torch.randn(rows, cols, device="cuda"))
            x = kept[-1]
            if i % 2 == 0:
                r = cold_median_us(f_ref, x, flush)
                c = cold_median_us(f_cand, x, flush)
            else:
                c = cold_median_us(f_cand, x, flush)
                r = cold_median_us(f_ref, x, flush)
            ratios.append(r / c)
        out[name] = ratios
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evals", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rows", type=int, default=16)
    ap.add_argument("--cols", type=int, default=16384)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child: one evaluation
    args = ap.parse_args()
    if args.one:
        return one_evaluation(args.rounds, args.rows, args.cols)
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError
    except ImportError:
        print("rounds_probe: SKIPPED: no GPU")
        return 77
    del torch
    evals = []
    for _ in range(args.evals):
        child = subprocess.run([sys.executable, __file__, "--one", "--rounds", str(args.rounds), "--rows", str(args.rows),
                                "--cols", str(args.cols)], capture_output=True, text=True, check=True)
        evals.append(json.loads(child.stdout.strip().splitlines()[-1]))
    spread = lambda v: max(v) / min(v)
    gmean = lambda r: math.exp(sum(map(math.log, r)) / len(r))
    for name in PAIRS:
        runs = [e[name] for e in evals]
        print(f"rounds_probe: {name} {args.rows}x{args.cols}: spread over {len(runs)} evaluations of {args.rounds} rounds: "
              f"first round {spread([r[0] for r in runs]):.3f}, median {spread([statistics.median(r) for r in runs]):.3f}, "
              f"geometric mean {spread([gmean(r) for r in runs]):.3f} (ratios: "
              + "; ".join(" ".join(f"{x:.3f}" for x in r) for r in runs) + ")", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
