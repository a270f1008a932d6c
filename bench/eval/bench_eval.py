#!/usr/bin/env python3
"""kagent evaluation benchmark, run on the GPU machine by scripts/gpu_check.sh bench.

Measures, in one run, side by side:
  1. compile time of typical native candidates (examples/*.cu), cache cold, median;
  2. evaluation time without compile (the worker's eval_seconds) for level-1-size problems,
     baselines cached (the steady state of a collection) and cold (first sight of a problem);
  3. timing stability: one kernel evaluated 5 times, each in a fresh worker: spread of medians;
  4. the same kernels through KernelBench's own harness (bench/eval/kernelbench_harness.py):
     speedups side by side, and end-to-end wall time per candidate. kagent: the whole
     `kagent eval` command for a new candidate of a known problem (nvcc runs, --no-compile-cache;
     the problem's spec and baselines are cached, as in any run past its first candidate),
     and also at first sight of the problem (everything cold, torch.compile baseline included).
     KernelBench: its eval_kernel_against_ref call with a fresh load_inline build (its own
     process start and torch import not counted).
Every number comes from `kagent eval --json` as a user runs it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["elementwise_gelu", "row_softmax", "gemm_bias_relu", "conv_block"]


def kagent_eval(kagent, problem, candidate, cache_dir, extra=()):
    start = time.perf_counter()
    p = subprocess.run([kagent, "eval", str(problem), str(candidate), "--json", "--cache-dir", str(cache_dir), *extra],
                       capture_output=True, text=True)
    wall = time.perf_counter() - start
    try:
        result = json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.exit(f"kagent eval {problem} {candidate} printed no JSON (rc {p.returncode}): {p.stderr[-2000:]}")
    result["wall_s"] = wall
    return result


def spread(values):
    return (max(values) - min(values)) / statistics.median(values)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kagent", default=str(ROOT / "build" / "kagent"))
    ap.add_argument("--out", default="bench_eval.json")
    ap.add_argument("--skip-kernelbench", action="store_true")
    ap.add_argument("--kb-twins", action="store_true",
                    help="also evaluate the kernelbench-format twins with kagent (about 100 s more)")
    args = ap.parse_args()
    out = {"examples": {}, "stability": {}, "kernelbench": []}
    shared_cache = Path(tempfile.mkdtemp(prefix="kagent-bench-"))

    print("== compile (cold cache) and evaluation", flush=True)
    for name in EXAMPLES:
        problem, cand = ROOT / "examples" / f"{name}.py", ROOT / "examples" / f"{name}.cu"
        cold = kagent_eval(args.kagent, problem, cand, Path(tempfile.mkdtemp(prefix="kagent-cold-")))
        warm = [kagent_eval(args.kagent, problem, cand, shared_cache) for _ in range(3)]
        known = kagent_eval(args.kagent, problem, cand, shared_cache, ["--no-compile-cache"])
        rec = {
            "status": cold["status"],
            "compile_s": cold["compile"]["seconds"] if cold.get("compile") else None,
            "eval_cold_s": cold["eval_seconds"],
            "end_to_end_cold_s": cold["wall_s"],
            "eval_warm_s": statistics.median(w["eval_seconds"] for w in warm[1:]),
            "end_to_end_warm_s": statistics.median(w["wall_s"] for w in warm[1:]),
            "end_to_end_known_problem_s": known["wall_s"],
            "compile_known_problem_s": known["compile"]["seconds"] if known.get("compile") else None,
            "speedup_eager": cold["timing"]["speedup_eager"] if cold.get("timing") else None,
            "speedup_compiled": cold["timing"]["speedup_compiled"] if cold.get("timing") else None,
            "candidate_ms": cold["timing"]["candidate"]["median_ms"] if cold.get("timing") else None,
        }
        out["examples"][name] = rec
        print(f"{name:18} {rec['status']:8} compile {rec['compile_s']:6.2f}s  eval cold {rec['eval_cold_s']:5.2f}s "
              f"warm {rec['eval_warm_s']:5.2f}s  end-to-end cold {rec['end_to_end_cold_s']:5.1f}s "
              f"warm {rec['end_to_end_warm_s']:5.1f}s  new candidate {rec['end_to_end_known_problem_s']:5.1f}s  "
              f"speedup {rec['speedup_eager'] or 0:.2f}x", flush=True)

    print("== stability: one kernel, 5 evaluations, fresh worker each", flush=True)
    for name in ["gemm_bias_relu", "elementwise_gelu"]:
        medians = [kagent_eval(args.kagent, ROOT / "examples" / f"{name}.py", ROOT / "examples" / f"{name}.cu",
                               shared_cache)["timing"]["candidate"]["median_ms"] for _ in range(5)]
        out["stability"][name] = {"medians_ms": medians, "spread": spread(medians)}
        print(f"{name:18} medians {' '.join(f'{m:.4f}' for m in medians)} ms  spread {spread(medians) * 100:.2f}%",
              flush=True)

    if not args.skip_kernelbench:
        print("== KernelBench's harness on the same kernels", flush=True)
        kb_json = shared_cache / "kb.json"
        subprocess.run([sys.executable, str(ROOT / "bench/eval/kernelbench_harness.py"), "run", "--examples",
                        "--out", str(kb_json)], check=False)
        kb = {Path(r["problem"]).stem: r for r in json.loads(kb_json.read_text())} if kb_json.exists() else {}
        for name in EXAMPLES:
            r = kb.get(name)
            mine = out["examples"][name]
            kb_twin = kagent_eval(args.kagent, ROOT / "examples" / f"{name}.py",
                                  ROOT / "bench/eval/candidates" / f"{name}_kb.py", shared_cache) if args.kb_twins else {}
            row = {
                "name": name,
                "kagent_speedup": mine["speedup_eager"],
                "kagent_kb_format_speedup": kb_twin["timing"]["speedup_eager"] if kb_twin.get("timing") else None,
                "kernelbench_speedup": r.get("speedup") if r else None,
                "kernelbench_correct": r.get("correct") if r else None,
                "kagent_end_to_end_s": mine["end_to_end_known_problem_s"],
                "kagent_first_sight_s": mine["end_to_end_cold_s"],
                "kernelbench_end_to_end_s": r.get("wall_s") if r else None,
            }
            if row["kagent_speedup"] and row["kernelbench_speedup"]:
                row["speedup_agreement"] = row["kagent_speedup"] / row["kernelbench_speedup"] - 1
            if row["kernelbench_end_to_end_s"]:
                row["end_to_end_ratio"] = row["kernelbench_end_to_end_s"] / row["kagent_end_to_end_s"]
                row["first_sight_ratio"] = row["kernelbench_end_to_end_s"] / row["kagent_first_sight_s"]
            out["kernelbench"].append(row)
            print(f"{name:18} speedup kagent {row['kagent_speedup'] or 0:.3f}x (kb-format {row['kagent_kb_format_speedup'] or float('nan'):.3f}x) "
                  f"KernelBench {row['kernelbench_speedup'] or 0:.3f}x  agree {row.get('speedup_agreement', float('nan')) * 100:+.1f}%  "
                  f"end-to-end kagent {row['kagent_end_to_end_s']:.1f}s (first sight {row['kagent_first_sight_s']:.1f}s) "
                  f"KernelBench {row['kernelbench_end_to_end_s'] or 0:.1f}s "
                  f"({row.get('end_to_end_ratio', 0):.1f}x; first sight {row.get('first_sight_ratio', 0):.1f}x)", flush=True)

    ex = out["examples"].values()
    summary = {
        "median_compile_s": statistics.median(e["compile_s"] for e in ex if e["compile_s"] is not None),
        "median_eval_warm_s": statistics.median(e["eval_warm_s"] for e in ex),
        "median_eval_cold_s": statistics.median(e["eval_cold_s"] for e in ex),
        "max_stability_spread": max(s["spread"] for s in out["stability"].values()),
    }
    agree = [abs(r["speedup_agreement"]) for r in out["kernelbench"] if "speedup_agreement" in r]
    ratios = [r["end_to_end_ratio"] for r in out["kernelbench"] if "end_to_end_ratio" in r]
    if agree:
        summary["max_speedup_disagreement"] = max(agree)
    if ratios:
        summary["median_end_to_end_ratio"] = statistics.median(ratios)
        summary["median_first_sight_ratio"] = statistics.median(r["first_sight_ratio"] for r in out["kernelbench"]
                                                                if "first_sight_ratio" in r)
    out["summary"] = summary
    Path(args.out).write_text(json.dumps(out, indent=2))
    print("== summary")
    print(f"median compile {summary['median_compile_s']:.2f} s (target <= 10); median eval {summary['median_eval_warm_s']:.2f} s "
          f"warm, {summary['median_eval_cold_s']:.2f} s cold (target <= 3); stability spread "
          f"{summary['max_stability_spread'] * 100:.2f}% (target <= 2%)"
          + (f"; speedups agree with KernelBench within {summary['max_speedup_disagreement'] * 100:.1f}% (target 5%)" if agree else "")
          + (f"; end to end {summary['median_end_to_end_ratio']:.1f}x faster than KernelBench per new candidate "
             f"(target 3x), {summary['median_first_sight_ratio']:.1f}x at first sight of a problem" if ratios else ""))


if __name__ == "__main__":
    main()
