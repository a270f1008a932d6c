#!/usr/bin/env python3
"""KernelBench's own verdicts, side by side with kagent's (bench/fidelity).

Runs KernelBench's harness, kernelbench.eval.eval_kernel_against_ref at the commit bench/eval
pins (.carry/kernelbench, set up by bench/eval/kernelbench_harness.py setup), on (problem,
answer) pairs: correctness only (measure_performance=False, 5 trials, seed 42, fp32, backend
"cuda"), each pair in its own process with a fresh build folder, `--jobs` pairs at once (a
verdict needs no idle GPU; nothing here is timed).

Tolerance: the pinned harness compares fp32 at atol = rtol = 1e-4 (get_tolerance_for_precision);
KernelBench v0/v0.1 and every published leaderboard verdict used 1e-2. `--atol-rtol X`
replaces that one function's answer with X (the only change to the harness); the default
keeps the harness's own. Every record says which was used.

Usage (on the GPU machine, .carry/kernelbench carried):
  python3 bench/fidelity/kb_verdicts.py --pairs pairs.json --out kb.json --jobs 8 --atol-rtol 1e-2
pairs.json: [{"name", "problem", "candidate"}]. Output: one record per pair: name, compiled,
correct, tolerance, metadata (KernelBench's: max_difference, correctness_issue, runtime_error,
compilation_error ...), wall_s, returncode, error (when the child died).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
import kernelbench_harness as kbh  # noqa: E402  (only its _import_kernelbench: the carried harness)


def child(args) -> int:
    """One pair, in its own process: KernelBench's eval_kernel_against_ref, correctness only."""
    import torch

    kb_eval, _, kb_utils = kbh._import_kernelbench()
    kb_utils.set_gpu_arch(args.gpu_arch)
    tolerance = "harness" if args.atol_rtol is None else args.atol_rtol
    if args.atol_rtol is not None:
        kb_eval.get_tolerance_for_precision = lambda precision, _t=args.atol_rtol: _t
    out = {"compiled": False, "correct": False, "tolerance": tolerance}
    t0 = time.perf_counter()
    res = kb_eval.eval_kernel_against_ref(
        original_model_src=Path(args.problem).read_text(),
        custom_model_src=Path(args.candidate).read_text(),
        seed_num=42, num_correct_trials=5, measure_performance=False, verbose=False,
        build_dir=args.build_dir, device=torch.device("cuda:0"), backend="cuda", precision=torch.float32,
        check_for_excessive_speedup=False)
    out["wall_s"] = round(time.perf_counter() - t0, 3)
    if res is None:
        out["error"] = "eval_kernel_against_ref returned None (KernelBench's build-lock retry case)"
    else:
        out["compiled"] = bool(res.compiled)
        out["correct"] = bool(res.correctness)
        out["metadata"] = kb_eval.check_metadata_serializable_all_types(res.metadata)
    Path(args.result).write_text(json.dumps(out, default=str))
    return 0


def run_pair(pair, root: Path, args) -> dict:
    build = root / pair["name"]
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir(parents=True)
    result = root / f"{pair['name']}.json"
    cmd = [sys.executable, os.path.abspath(__file__), "_child", "--problem", pair["problem"], "--candidate",
           pair["candidate"], "--result", str(result), "--build-dir", str(build), "--gpu-arch", *args.gpu_arch]
    if args.atol_rtol is not None:
        cmd += ["--atol-rtol", str(args.atol_rtol)]
    rec = dict(pair)
    t0 = time.perf_counter()
    # Each child builds with ninja; with --jobs children at once, MAX_JOBS shares the cores.
    env = dict(os.environ, MAX_JOBS=str(max(1, (os.cpu_count() or 2) // max(1, args.jobs))))
    try:
        proc = subprocess.run(cmd, timeout=args.timeout, capture_output=True, text=True, env=env)
        rec["returncode"] = proc.returncode
        if result.exists():
            rec.update(json.loads(result.read_text()))
        else:
            rec.update({"compiled": None, "correct": False, "error": "the child died before writing a result",
                        "stderr_tail": proc.stderr[-3000:]})
    except subprocess.TimeoutExpired:
        rec.update({"compiled": None, "correct": False, "error": f"timeout after {args.timeout} s"})
    rec["process_wall_s"] = round(time.perf_counter() - t0, 3)
    shutil.rmtree(build, ignore_errors=True)
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd")
    c = sub.add_parser("_child")
    for flag in ("--problem", "--candidate", "--result", "--build-dir"):
        c.add_argument(flag, required=True)
    c.add_argument("--atol-rtol", type=float)
    c.add_argument("--gpu-arch", nargs="+", default=["Hopper"])
    ap.add_argument("--pairs", help="JSON list of {name, problem, candidate}")
    ap.add_argument("--out", help="where to write the records (JSON list)")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--atol-rtol", type=float, help="replace the harness's fp32 tolerance (default: its own, 1e-4)")
    ap.add_argument("--gpu-arch", nargs="+", default=["Hopper"])
    ap.add_argument("--build-root", help="per-pair build folders (default: a temporary folder)")
    args = ap.parse_args(argv)
    if args.cmd == "_child":
        return child(args)
    if not args.pairs or not args.out:
        ap.error("--pairs and --out are required")
    pairs = json.loads(Path(args.pairs).read_text())
    root = Path(args.build_root or tempfile.mkdtemp(prefix="kb_fidelity_"))
    root.mkdir(parents=True, exist_ok=True)
    records, t0 = [], time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_pair, p, root, args): p for p in pairs}
        for n, f in enumerate(concurrent.futures.as_completed(futures), 1):
            rec = f.result()
            records.append(rec)
            print(f"[kb {n}/{len(pairs)} {time.perf_counter() - t0:6.0f}s] {rec['name']}: "
                  f"compiled={rec.get('compiled')} correct={rec.get('correct')} {rec.get('error', '')}", flush=True)
            Path(args.out).write_text(json.dumps(sorted(records, key=lambda r: r["name"]), indent=1, default=str))
    print(f"KernelBench harness: {sum(bool(r.get('correct')) for r in records)} of {len(records)} correct "
          f"in {time.perf_counter() - t0:.0f} s ({args.jobs} at once)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
