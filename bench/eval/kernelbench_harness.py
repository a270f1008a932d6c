#!/usr/bin/env python3
"""Run KernelBench's own evaluation harness on kernelbench-format candidates.

kagent's benchmark uses this to put KernelBench's verdicts and timings next to kagent's
for the same (problem, candidate) pairs. Nothing of KernelBench is committed here: its
files live in .carry/kernelbench/ (git-ignored, carried to the GPU machine), built by the
`setup` command below from a checkout of github.com/ScalingIntelligence/KernelBench.

What is run, per pair, is what KernelBench's scripts/run_and_check.py does locally:
  1. kernelbench.eval.eval_kernel_against_ref(ref_src, kernel_src,
        num_correct_trials=5, num_perf_trials=100, measure_performance=True,
        timing_method="cuda_event", precision=torch.float32, backend="cuda",
        build_dir=<fresh folder>, device=cuda:0)
     (with its default check_for_excessive_speedup=True, which also times the reference
     inside the same call: result.ref_runtime);
  2. kernelbench.timing.measure_ref_program_time(..., num_trials=100,
        use_torch_compile=False, timing_method="cuda_event", precision="fp32")
     for the eager reference time, which run_and_check.py divides by the kernel's time.
  TORCH_CUDA_ARCH_LIST is set with kernelbench.utils.set_gpu_arch(["Hopper"]) first, as
  run_and_check.py does with its gpu_arch setting.
Every pair runs in its own Python process (a crashing or hanging candidate costs that pair
only); wall_s is the time of the eval_kernel_against_ref call, load_inline compile included.

Usage:
  # once, on a machine with git and network (writes .carry/kernelbench/):
  python3 bench/eval/kernelbench_harness.py setup --kernelbench-repo /path/to/KernelBench[.git]
  # on the GPU machine (pass .carry/kernelbench in the run's carry list):
  python3 bench/eval/kernelbench_harness.py run --examples --out $OUT/kb.json
  python3 bench/eval/kernelbench_harness.py run --pair examples/gemm_bias_relu.py \
      bench/eval/candidates/gemm_bias_relu_kb.py --out kb.json

Output (JSON list, also printed as a table): per pair name, problem, candidate, compiled,
correct, runtime_ms (KernelBench's mean over the timed trials), ref_runtime_ms (eager
mean from measure_ref_program_time), ref_runtime_in_eval_ms, speedup
(ref_runtime_ms / runtime_ms), wall_s, process_wall_s, runtime_stats, ref_runtime_stats,
metadata (KernelBench's, made JSON-serialisable), error / returncode when the child died.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CARRY = REPO_ROOT / ".carry" / "kernelbench"
SITE = CARRY / "site"

# Files copied verbatim from src/kernelbench/ of KernelBench. utils.py is excerpted (below).
VERBATIM_FILES = ["__init__.py", "eval.py", "timing.py", "dataset.py"]
# From utils.py only what eval/timing use (get_gpu_vendor; set_gpu_arch as run_and_check
# uses it) and the torch.rand_mix aliases that the package's __init__ imports utils for.
# The rest of utils.py is LLM-query and multiprocessing helpers that import openai, litellm
# and python-dotenv, none of which the GPU machine has or the evaluation needs.
UTILS_NAMES = ["NVIDIA_ARCHS", "AMD_ARCHS", "get_gpu_vendor", "set_gpu_arch"]
UTILS_TAIL_MARKER = "# src/random_inputs.py"
# Python packages eval.py needs that the GPU machine lacks (KINDS.md's package list):
# pydantic (KernelExecResult is a pydantic model) and what pydantic itself imports.
WHEELS = ["pydantic", "pydantic-core", "annotated-types", "typing-inspection"]

EXAMPLES = ["elementwise_gelu", "row_softmax", "gemm_bias_relu", "conv_block"]


# --------------------------------------------------------------------------- setup

def _git_show(repo: Path, rev: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def _excerpt_utils(src: str) -> str:
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True)
    parts = []
    for node in tree.body:
        names = []
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if any(n in UTILS_NAMES for n in names):
            parts.append("".join(lines[node.lineno - 1:node.end_lineno]))
    missing = [n for n in UTILS_NAMES if not any(f"def {n}(" in p or p.startswith(n) for p in parts)]
    if missing:
        raise SystemExit(f"utils.py excerpt: not found: {missing}")
    tail = src.find(UTILS_TAIL_MARKER)
    if tail < 0:
        raise SystemExit("utils.py excerpt: random_inputs section not found")
    head = ('"""Excerpt of KernelBench src/kernelbench/utils.py (see ../PROVENANCE.md): the\n'
            'definitions the evaluation path uses, copied verbatim; the LLM-query helpers\n'
            '(openai, litellm, python-dotenv) are left out."""\n\n'
            "import os\nimport torch\n\n")
    return head + "\n\n".join(parts) + "\n\n" + src[tail:]


def _install_wheels(wheel_dir: Path) -> list[str]:
    """Unpack wheels into SITE (a wheel is a zip laid out as site-packages)."""
    installed = []
    SITE.mkdir(parents=True, exist_ok=True)
    for whl in sorted(wheel_dir.glob("*.whl")):
        with zipfile.ZipFile(whl) as z:
            z.extractall(SITE)
        installed.append(whl.name)
    return installed


def cmd_setup(args) -> int:
    repo = Path(args.kernelbench_repo)
    rev = subprocess.run(["git", "-C", str(repo), "rev-parse", args.rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    pkg = CARRY / "kernelbench"
    if CARRY.exists():
        shutil.rmtree(CARRY)
    pkg.mkdir(parents=True)
    for f in VERBATIM_FILES:
        (pkg / f).write_text(_git_show(repo, rev, f"src/kernelbench/{f}"))
    (pkg / "utils.py").write_text(_excerpt_utils(_git_show(repo, rev, "src/kernelbench/utils.py")))
    (CARRY / "LICENSE").write_text(_git_show(repo, rev, "LICENSE"))

    wheel_dir = Path(args.wheels) if args.wheels else CARRY / "wheels"
    if not args.wheels:
        wheel_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--python-version", "3.12", "--implementation", "cp",
               "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
               "--platform", "manylinux2014_x86_64", "--platform", "any", "-d", str(wheel_dir)] + WHEELS
        subprocess.run(cmd, check=True)
    installed = _install_wheels(wheel_dir)

    (CARRY / "PROVENANCE.md").write_text(
        "# KernelBench harness files (not part of kagent; git-ignored)\n\n"
        f"From github.com/ScalingIntelligence/KernelBench at commit {rev} (MIT, see LICENSE).\n\n"
        f"- kernelbench/{', kernelbench/'.join(VERBATIM_FILES)}: verbatim copies of src/kernelbench/.\n"
        "- kernelbench/utils.py: excerpt of src/kernelbench/utils.py: "
        + ", ".join(UTILS_NAMES) + " and the random_inputs section (torch.rand_mix aliases),\n"
        "  verbatim; left out are the LLM-query and multiprocessing helpers and `load_dotenv()`,\n"
        "  which need openai, litellm and python-dotenv (absent on the GPU machine; litellm's\n"
        "  wheel alone is 37 MB) and take no part in evaluation.\n"
        "- site/: wheels unpacked for packages eval.py imports that the GPU machine lacks: "
        + ", ".join(installed) + ".\n"
        "  bench/eval/kernelbench_harness.py appends site/ to sys.path, so the machine's own\n"
        "  packages win wherever both exist.\n\n"
        "Rebuild: python3 bench/eval/kernelbench_harness.py setup --kernelbench-repo <checkout>\n")
    print(f"wrote {CARRY} (KernelBench {rev[:12]}); wheels: {', '.join(installed)}")
    return 0


# --------------------------------------------------------------------------- run

def _import_kernelbench():
    if not (CARRY / "kernelbench" / "eval.py").exists():
        raise SystemExit(f"{CARRY} is missing: run `setup` first (and carry .carry/kernelbench)")
    sys.path.insert(0, str(CARRY))
    if SITE.exists():
        sys.path.append(str(SITE))
    from kernelbench import eval as kb_eval  # noqa: E402
    from kernelbench import timing as kb_timing  # noqa: E402
    from kernelbench import utils as kb_utils  # noqa: E402
    return kb_eval, kb_timing, kb_utils


def _one(args) -> int:
    """Child process: evaluate one pair, write JSON to args.result."""
    t_proc = time.perf_counter()
    import torch

    kb_eval, kb_timing, kb_utils = _import_kernelbench()
    kb_utils.set_gpu_arch(args.gpu_arch)
    device = torch.device("cuda:0")
    precision = kb_eval.get_torch_dtype_from_string(args.precision)
    ref_src = Path(args.problem).read_text()
    kernel_src = Path(args.candidate).read_text()
    out = {"compiled": False, "correct": False, "runtime_ms": None, "ref_runtime_ms": None,
           "ref_runtime_in_eval_ms": None, "speedup": None}

    t0 = time.perf_counter()
    res = kb_eval.eval_kernel_against_ref(
        original_model_src=ref_src,
        custom_model_src=kernel_src,
        seed_num=42,
        num_correct_trials=args.num_correct_trials,
        num_perf_trials=args.num_perf_trials,
        measure_performance=True,
        timing_method=args.timing_method,
        verbose=False,
        build_dir=args.build_dir,
        device=device,
        backend="cuda",
        precision=precision,
    )
    out["wall_s"] = round(time.perf_counter() - t0, 3)
    if res is None:  # KernelBench's "lock file error, please retry"
        out["error"] = "eval_kernel_against_ref returned None (build lock error; retry)"
    else:
        out["compiled"] = bool(res.compiled)
        out["correct"] = bool(res.correctness)
        if res.runtime is not None and res.runtime > 0:
            out["runtime_ms"] = res.runtime
        if res.ref_runtime is not None and res.ref_runtime > 0:
            out["ref_runtime_in_eval_ms"] = res.ref_runtime
        out["runtime_stats"] = res.runtime_stats
        out["ref_runtime_stats_in_eval"] = res.ref_runtime_stats
        out["metadata"] = kb_eval.check_metadata_serializable_all_types(res.metadata)

    if not args.no_ref_timing:
        t1 = time.perf_counter()
        stats = kb_timing.measure_ref_program_time(
            ref_arch_name=Path(args.problem).stem,
            ref_arch_src=ref_src,
            num_trials=args.num_perf_trials,
            use_torch_compile=False,
            timing_method=args.timing_method,
            device=device,
            verbose=False,
            precision=args.precision,
        )
        out["ref_timing_wall_s"] = round(time.perf_counter() - t1, 3)
        if stats:
            out["ref_runtime_ms"] = stats.get("mean")
            out["ref_runtime_stats"] = stats
    if out["correct"] and out["runtime_ms"] and out["ref_runtime_ms"]:
        out["speedup"] = round(out["ref_runtime_ms"] / out["runtime_ms"], 4)
    out["process_wall_s_in_child"] = round(time.perf_counter() - t_proc, 3)
    Path(args.result).write_text(json.dumps(out, indent=2, default=str))
    return 0


def _pairs_from_args(args) -> list[tuple[str, str, str]]:
    pairs = []
    if args.examples:
        for name in EXAMPLES:
            pairs.append((name, str(REPO_ROOT / "examples" / f"{name}.py"),
                          str(REPO_ROOT / "bench" / "eval" / "candidates" / f"{name}_kb.py")))
    for prob, cand in args.pair or []:
        pairs.append((f"{Path(prob).stem}__{Path(cand).stem}", prob, cand))
    if args.pairs_file:
        for item in json.loads(Path(args.pairs_file).read_text()):
            name = item.get("name") or f"{Path(item['problem']).stem}__{Path(item['candidate']).stem}"
            pairs.append((name, item["problem"], item["candidate"]))
    if not pairs:
        raise SystemExit("no pairs: give --examples, --pair PROBLEM CANDIDATE or --pairs-file")
    names = [n for n, _, _ in pairs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise SystemExit(f"duplicate pair names (they share build folders): {dup}")
    return pairs


def cmd_run(args) -> int:
    results = []
    for name, prob, cand in _pairs_from_args(args):
        build_root = Path(args.build_dir) if args.build_dir else Path(tempfile.mkdtemp(prefix="kb_build_"))
        build_dir = build_root / name
        if build_dir.exists():
            shutil.rmtree(build_dir)  # fresh build: compile time is part of wall_s
        build_dir.mkdir(parents=True)
        result_file = build_root / f"{name}.result.json"
        cmd = [sys.executable, os.path.abspath(__file__), "_one", "--problem", prob, "--candidate", cand,
               "--result", str(result_file), "--build-dir", str(build_dir),
               "--num-correct-trials", str(args.num_correct_trials),
               "--num-perf-trials", str(args.num_perf_trials), "--timing-method", args.timing_method,
               "--precision", args.precision, "--gpu-arch", *args.gpu_arch]
        if args.no_ref_timing:
            cmd.append("--no-ref-timing")
        print(f"[kb-harness] {name}: {prob} <- {cand}", flush=True)
        t0 = time.perf_counter()
        rec = {"name": name, "problem": prob, "candidate": cand}
        try:
            proc = subprocess.run(cmd, timeout=args.timeout, capture_output=not args.verbose, text=True)
            rec["returncode"] = proc.returncode
            if result_file.exists():
                rec.update(json.loads(result_file.read_text()))
            else:
                rec.update({"compiled": None, "correct": False, "error": "child died before writing a result"})
                if not args.verbose:
                    rec["stderr_tail"] = (proc.stderr or "")[-2000:]
        except subprocess.TimeoutExpired:
            rec.update({"compiled": None, "correct": False, "error": f"timeout after {args.timeout} s"})
        rec["process_wall_s"] = round(time.perf_counter() - t0, 3)
        results.append(rec)

    hdr = f"{'name':28} {'compiled':>8} {'correct':>7} {'runtime_ms':>10} {'ref_ms':>9} {'speedup':>8} {'wall_s':>7}"
    print(hdr)
    print("-" * len(hdr))
    for r in results:
        fmt = lambda v, f: (f.format(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v))
        print(f"{r['name']:28} {str(r.get('compiled')):>8} {str(r.get('correct')):>7} "
              f"{fmt(r.get('runtime_ms'), '{:.4g}'):>10} {fmt(r.get('ref_runtime_ms'), '{:.4g}'):>9} "
              f"{fmt(r.get('speedup'), '{:.3f}'):>8} {fmt(r.get('wall_s'), '{:.1f}'):>7}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(results, indent=2, default=str) + "\n")
        print(f"wrote {args.out}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("setup", help="build .carry/kernelbench from a KernelBench checkout")
    s.add_argument("--kernelbench-repo", required=True, help="git dir or checkout of KernelBench")
    s.add_argument("--rev", default="HEAD")
    s.add_argument("--wheels", help="folder of already downloaded wheels (default: pip download)")

    def common(p):
        p.add_argument("--num-correct-trials", type=int, default=5)
        p.add_argument("--num-perf-trials", type=int, default=100)
        p.add_argument("--timing-method", default="cuda_event")
        p.add_argument("--precision", default="fp32")
        p.add_argument("--gpu-arch", nargs="+", default=["Hopper"])
        p.add_argument("--no-ref-timing", action="store_true", help="skip measure_ref_program_time")

    r = sub.add_parser("run", help="evaluate pairs with KernelBench's harness")
    r.add_argument("--examples", action="store_true", help="examples/<name>.py with bench/eval/candidates/<name>_kb.py")
    r.add_argument("--pair", nargs=2, action="append", metavar=("PROBLEM", "CANDIDATE"))
    r.add_argument("--pairs-file", help="JSON list of {name?, problem, candidate}")
    r.add_argument("--out", help="write the JSON results here")
    r.add_argument("--build-dir", help="root for per-candidate build folders (default: a temp dir)")
    r.add_argument("--timeout", type=float, default=900.0, help="seconds per pair")
    r.add_argument("--verbose", action="store_true", help="show the children's output")
    common(r)

    o = sub.add_parser("_one")  # internal: one pair in a child process
    o.add_argument("--problem", required=True)
    o.add_argument("--candidate", required=True)
    o.add_argument("--result", required=True)
    o.add_argument("--build-dir", required=True)
    common(o)

    args = ap.parse_args(argv)
    return {"setup": cmd_setup, "run": cmd_run, "_one": _one}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
