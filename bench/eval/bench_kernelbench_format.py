#!/usr/bin/env python3
"""KernelBench-format answers (ModelNew + load_inline) through `kagent eval` and through
KernelBench's own eval_kernel_against_ref, on the same files and GPU, in one run.

Pairs: level1/1_Square_matrix_multiplication_ and level2/76_Gemm_Add_ReLU with the correct
answers in bench/eval/candidates/. Per pair:
  kagent  first sight: the whole `kagent eval --json` command with a fresh cache (spec,
          eager and torch.compile baselines measured, the load_inline sources compiled);
          new candidate: the same command again with --no-compile-cache (nvcc runs again;
          spec and baselines cached, as for every answer after a problem's first), `--repeats`
          times, median. The extensions' builder (kagent or torch) and the compile phase
          come from the JSON result.
  KernelBench: bench/eval/kernelbench_harness.py (eval_kernel_against_ref with a fresh
          build folder, then measure_ref_program_time), one process per pair; its wall time
          is the eval_kernel_against_ref call.
Targets: kagent at least 3x faster end to end per new candidate; speedups within 5%.

Run on the GPU machine (needs .carry/kernelbench, see scripts/prepare_carry.sh):
  python3 bench/eval/bench_kernelbench_format.py --kagent build-gpu/kagent --out $OUT
It writes $OUT/bench_kernelbench_format.json and $OUT/RESULTS_kernelbench_format.md.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_eval import kagent_eval  # the same `kagent eval --json` call, timed

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [
    ("level1/1_Square_matrix_multiplication_.py", "level1_1_matmul_kb.py"),
    ("level2/76_Gemm_Add_ReLU.py", "level2_76_gemm_add_relu_kb.py"),
]


def problems_dir():
    for d in (os.environ.get("KAGENT_KERNELBENCH_DIR"), ROOT / ".carry" / "kernelbench-problems",
              ROOT.parent / "shared" / "kernelbench"):
        if d and (Path(d) / "level1").is_dir():
            return Path(d)
    sys.exit("KernelBench problems not found: set KAGENT_KERNELBENCH_DIR (or run scripts/prepare_carry.sh)")


def phase_seconds(result, name):
    for p in result.get("phases", []):
        if p["name"] == name:
            return p["seconds"]
    return None


def summary_of(result):
    timing = result.get("timing") or {}
    return {
        "status": result["status"],
        "reason": result.get("reason", ""),
        "wall_s": round(result["wall_s"], 2),
        "compile_phase_s": phase_seconds(result, "compile"),
        "load_phase_s": phase_seconds(result, "load"),
        "eval_s": result.get("eval_seconds"),
        "built_by": [f"{e['name']}:{e['built_by']}" for e in result.get("extensions", [])],
        "fallback_reasons": [e["reason"] for e in result.get("extensions", []) if e["built_by"] != "kagent"],
        "speedup_eager": timing.get("speedup_eager"),
        "candidate_ms": (timing.get("candidate") or {}).get("median_ms"),
        "eager_ms": (timing.get("eager") or {}).get("median_ms"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kagent", default=str(ROOT / "build" / "kagent"))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--repeats", type=int, default=2, help="new-candidate evaluations per pair (median)")
    ap.add_argument("--skip-kernelbench", action="store_true")
    args = ap.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    kb_dir = problems_dir()
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    rows = []
    say("== kagent eval (KernelBench-format answers: load_inline built by kagent's nvcc pipeline)")
    for prob, cand in PAIRS:
        problem, candidate = kb_dir / prob, ROOT / "bench" / "eval" / "candidates" / cand
        cache = Path(tempfile.mkdtemp(prefix="kagent-kbformat-"))
        first = summary_of(kagent_eval(args.kagent, problem, candidate, cache))
        again = [summary_of(kagent_eval(args.kagent, problem, candidate, cache, ["--no-compile-cache"]))
                 for _ in range(args.repeats)]
        row = {"problem": prob, "candidate": str(candidate.relative_to(ROOT)), "first_sight": first,
               "new_candidate": again,
               "kagent_end_to_end_s": statistics.median(a["wall_s"] for a in again),
               "kagent_speedup": statistics.median(a["speedup_eager"] or 0 for a in again) or first["speedup_eager"]}
        rows.append(row)
        walls = " ".join(f"{a['wall_s']:.1f}s" for a in again)
        compiles = " ".join(f"{a['compile_phase_s'] or 0:.1f}s" for a in again)
        evals = " ".join(f"{a['eval_s'] or 0:.1f}s" for a in again)
        say(f"{Path(prob).stem:40} {first['status']:8} first sight {first['wall_s']:5.1f}s  new candidate {walls} "
            f"(compile phase {compiles}, eval {evals})  built by {', '.join(first['built_by']) or '-'}  "
            f"speedup {row['kagent_speedup'] or 0:.3f}x")
        for r in first["fallback_reasons"]:
            say(f"    fell back to torch's load_inline: {r}")

    if not args.skip_kernelbench:
        say("== KernelBench's eval_kernel_against_ref on the same files")
        kb_json = out_dir / "kb_kernelbench_format.json"
        cmd = [sys.executable, str(ROOT / "bench/eval/kernelbench_harness.py"), "run", "--out", str(kb_json)]
        for prob, cand in PAIRS:
            cmd += ["--pair", str(kb_dir / prob), str(ROOT / "bench" / "eval" / "candidates" / cand)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        for line in p.stdout.splitlines():
            say(line)
        kb = {Path(r["problem"]).name: r for r in json.loads(kb_json.read_text())} if kb_json.exists() else {}
        for row in rows:
            r = kb.get(Path(row["problem"]).name, {})
            row["kernelbench"] = {k: r.get(k) for k in ("compiled", "correct", "runtime_ms", "ref_runtime_ms",
                                                         "speedup", "wall_s", "error")}
            if r.get("speedup") and row["kagent_speedup"]:
                row["speedup_agreement"] = row["kagent_speedup"] / r["speedup"] - 1
            if r.get("wall_s"):
                row["end_to_end_ratio"] = r["wall_s"] / row["kagent_end_to_end_s"]
                row["first_sight_ratio"] = r["wall_s"] / row["first_sight"]["wall_s"]

    say("== side by side")
    for row in rows:
        kb = row.get("kernelbench", {})
        say(f"{Path(row['problem']).stem:40} speedup kagent {row['kagent_speedup'] or 0:.3f}x KernelBench "
            f"{kb.get('speedup') or 0:.3f}x  agree {row.get('speedup_agreement', float('nan')) * 100:+.1f}%  "
            f"end to end kagent {row['kagent_end_to_end_s']:.1f}s (first sight {row['first_sight']['wall_s']:.1f}s) "
            f"KernelBench {kb.get('wall_s') or 0:.1f}s  ({row.get('end_to_end_ratio', 0):.1f}x; first sight "
            f"{row.get('first_sight_ratio', 0):.1f}x)")
    agree = [abs(r["speedup_agreement"]) for r in rows if "speedup_agreement" in r]
    ratios = [r["end_to_end_ratio"] for r in rows if "end_to_end_ratio" in r]
    all_kagent = all(all(b.endswith(":kagent") for b in a["built_by"]) and a["built_by"]
                     for r in rows for a in r["new_candidate"])
    summary = (f"KernelBench-format answers: {sum(r['first_sight']['status'] == 'correct' for r in rows)}/{len(rows)} "
               f"correct, extensions built by kagent: {'all' if all_kagent else 'NOT all'}")
    if ratios:
        summary += (f"; end to end {min(ratios):.1f}x-{max(ratios):.1f}x faster than KernelBench's "
                    f"eval_kernel_against_ref per new candidate (target 3x)")
    if agree:
        summary += f"; speedups agree within {max(agree) * 100:.1f}% (target 5%)"
    say("== summary")
    say(summary)

    (out_dir / "bench_kernelbench_format.json").write_text(json.dumps({"pairs": rows, "summary": summary}, indent=2))
    # The command a person typed (scripts/gpu_check.sh names itself), else this script's.
    cmdline = os.environ.get("KAGENT_BENCH_COMMAND") or "python3 bench/eval/bench_kernelbench_format.py " + " ".join(
        sys.argv[1:])
    (out_dir / "RESULTS_kernelbench_format.md").write_text(
        "# KernelBench-format answers: kagent eval vs KernelBench's eval_kernel_against_ref\n\n"
        f"```\n$ {cmdline}\n" + "\n".join(lines) + "\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
