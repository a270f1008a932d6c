#!/usr/bin/env python3
"""What the profile phase costs (issue 4): `kagent eval` on the four examples with and without
`--no-profile`, interleaved in one run so that machine drift hits both alike.

Per example: the worker's eval_seconds (compile excluded: the compile cache is warm after the
first call) with the profile and without, their ratio, the profile phase's own seconds as the
worker reports them, and whether hardware counters were available. Target: profiling adds
under 30% to eval_seconds. Prints a table and writes JSON (--out).

    python3 bench/profiler/bench_profiler.py --kagent build-gpu/kagent --repeats 3 --out bench_profiler.json
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["elementwise_gelu", "row_softmax", "gemm_bias_relu", "conv_block"]
TARGET_RATIO = 1.30


def kagent_eval(kagent, name, cache_dir, profile):
    problem, cand = ROOT / "examples" / f"{name}.py", ROOT / "examples" / f"{name}.cu"
    cmd = [kagent, "eval", str(problem), str(cand), "--json", "--cache-dir", str(cache_dir)]
    if not profile:
        cmd.append("--no-profile")
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    try:
        result = json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.exit(f"{' '.join(cmd)} printed no JSON (rc {p.returncode}): {p.stderr[-2000:]}")
    if result.get("status") != "correct":
        sys.exit(f"{name}: expected a correct verdict, got {result.get('status')}: {result.get('message')}")
    profile_json = result.get("profile") or {}
    if profile and not profile_json:
        sys.exit(f"{name}: no profile in the result although profiling was on")
    if not profile and profile_json:
        sys.exit(f"{name}: a profile in the result although --no-profile was given")
    timing = result.get("timing") or {}
    return {
        "eval_s": result["eval_seconds"],
        "candidate_ms": (timing.get("candidate") or {}).get("median_ms"),
        "wall_s": wall,
        "profile_s": profile_json.get("seconds"),
        "profile_error": profile_json.get("error"),
        "counters_available": profile_json.get("counters_available"),
        "counters_reason": profile_json.get("counters_reason"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kagent", default=str(ROOT / "build" / "kagent"))
    ap.add_argument("--repeats", type=int, default=3, help="interleaved pairs per example (after one warm-up pair)")
    ap.add_argument("--out", default="bench_profiler.json")
    args = ap.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="kagent-bench-profiler-"))
    out = {"examples": {}, "target_ratio": TARGET_RATIO}

    print(f"{'example':<18} {'eval off':>9} {'eval on':>9} {'ratio':>6} {'phase':>7}  counters", flush=True)
    for name in EXAMPLES:
        # Warm-up pair: compile cache, spec and baseline caches filled; not counted.
        kagent_eval(args.kagent, name, cache, True)
        kagent_eval(args.kagent, name, cache, False)
        on, off = [], []
        for i in range(args.repeats):
            # Alternate which goes first so that neither always follows the other.
            order = (True, False) if i % 2 == 0 else (False, True)
            for profile in order:
                (on if profile else off).append(kagent_eval(args.kagent, name, cache, profile))
        eval_on = statistics.median(r["eval_s"] for r in on)
        eval_off = statistics.median(r["eval_s"] for r in off)
        phases = [r["profile_s"] for r in on if r["profile_s"] is not None]
        rec = {
            "eval_on_s": eval_on,
            "eval_off_s": eval_off,
            "ratio": eval_on / eval_off,
            "profile_phase_s": statistics.median(phases) if phases else None,
            "wall_on_s": statistics.median(r["wall_s"] for r in on),
            "wall_off_s": statistics.median(r["wall_s"] for r in off),
            "counters_available": on[-1]["counters_available"],
            "counters_reason": on[-1]["counters_reason"],
            "profile_error": on[-1]["profile_error"],
            "runs_on": on,
            "runs_off": off,
        }
        out["examples"][name] = rec
        counters = "yes" if rec["counters_available"] else f"no ({(rec['counters_reason'] or rec['profile_error'] or '')[:60]})"
        phase = f"{rec['profile_phase_s']:.2f}s" if rec["profile_phase_s"] is not None else "-"
        print(f"{name:<18} {eval_off:>8.2f}s {eval_on:>8.2f}s {rec['ratio']:>6.2f} {phase:>7}  {counters}", flush=True)

    ratios = [r["ratio"] for r in out["examples"].values()]
    out["median_ratio"] = statistics.median(ratios)
    out["max_ratio"] = max(ratios)
    verdict = "met" if out["max_ratio"] < TARGET_RATIO else "NOT met"
    print(f"profiling adds {100 * (out['median_ratio'] - 1):.0f}% to eval_seconds (median), "
          f"{100 * (out['max_ratio'] - 1):.0f}% at most; target < {100 * (TARGET_RATIO - 1):.0f}%: {verdict}")
    Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
