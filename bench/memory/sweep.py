"""Memory at KernelBench's official sizes: `kagent eval` of the problems with the largest
footprint (largest50.txt), each with a reference-wrapping KernelBench-format candidate (the
problem's own file plus `class ModelNew(Model): pass`, so the candidate runs the same torch
ops), then hand-written native kernels for 19_ReLU and 23_Softmax. Every problem must get a
verdict that is not internal_error and no out-of-memory; each row gives the evaluation's peak
GPU memory (the largest of its phases') as a ratio of the problem's footprint (inputs +
parameters + outputs).

usage: python3 bench/memory/sweep.py --kagent build-gpu/kagent --kernelbench DIR --out OUT [--deadline S]
Writes OUT/sweep_<gpu>.md (the table) and OUT/sweep_<gpu>.jsonl (one result per problem).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NATIVE = [("level1/19_ReLU.py", os.path.join(HERE, "relu.cu")),
          ("level1/23_Softmax.py", os.path.join(ROOT, "examples", "row_softmax.cu"))]


def evaluate(kagent, problem, candidate, timeout_s):
    cmd = [kagent, "eval", problem, candidate, "--json", "--no-compile-baseline", "--no-profile",
           "--timeout", str(timeout_s)]
    started = time.monotonic()
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s + 60)
    except subprocess.TimeoutExpired:
        return {"status": "sweep_timeout", "reason": "", "message": f"no answer in {timeout_s + 60} s"}, 0.0
    wall = time.monotonic() - started
    try:
        return json.loads(run.stdout[run.stdout.index("{"):]), wall
    except ValueError:
        return {"status": "no_json", "reason": "", "message": (run.stderr or run.stdout).strip()[-300:]}, wall


def row(name, kind, result, wall):
    phases = result.get("phases") or []
    peak = max(phases, key=lambda p: p.get("peak_gpu_bytes", 0), default={})
    footprint = result.get("footprint_bytes", 0)
    text = json.dumps(result)
    return {
        "problem": name, "candidate": kind, "status": result.get("status"), "reason": result.get("reason", ""),
        "message": result.get("message", "")[:200], "footprint_gb": footprint / 1e9,
        "peak_gb": peak.get("peak_gpu_bytes", 0) / 1e9, "peak_phase": peak.get("name", ""),
        "ratio": peak.get("peak_gpu_bytes", 0) / footprint if footprint else None, "wall_s": wall,
        "oom": "out of memory" in text.lower() or result.get("reason", "").endswith("_oom"),
    }


def gpu_name():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown GPU"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kagent", required=True)
    ap.add_argument("--kernelbench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=500, help="seconds; problems left then are listed as not run")
    ap.add_argument("--timeout", type=int, default=150, help="seconds per evaluation")
    ap.add_argument("--part", default="all", help="i/n: every n-th problem from the i-th (1-based), for calls that "
                                                  "cannot fit all; the native kernels run in the last part")
    args = ap.parse_args()
    gpu = gpu_name()
    tag = gpu.split()[-1].split("-")[0].lower() if gpu else "gpu"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(HERE, "largest50.txt")) as f:
        problems = [line.split()[1] for line in f if line.strip()]
    jobs = [(p, "reference-wrapping", None) for p in problems]
    part, parts = (1, 1) if args.part == "all" else map(int, args.part.split("/"))
    jobs = jobs[part - 1::parts]
    if part == parts:
        jobs += [(p, "native " + os.path.basename(c), c) for p, c in NATIVE]
    started, rows = time.monotonic(), []
    with tempfile.TemporaryDirectory() as tmp:
        for name, kind, native in jobs:
            problem = os.path.join(args.kernelbench, name)
            if time.monotonic() - started > args.deadline:
                rows.append({"problem": name, "candidate": kind, "status": "not run (deadline)", "reason": "",
                             "message": "", "footprint_gb": 0, "peak_gb": 0, "peak_phase": "", "ratio": None,
                             "wall_s": 0, "oom": False})
                continue
            candidate = native
            if candidate is None:
                candidate = os.path.join(tmp, os.path.basename(name))
                with open(problem) as src, open(candidate, "w") as dst:
                    dst.write(src.read() + "\n\nclass ModelNew(Model):\n    pass\n")
            result, wall = evaluate(args.kagent, problem, candidate, args.timeout)
            rows.append(row(name, kind, result, wall))
            r = rows[-1]
            print(f"{name:<60} {r['status']:<14} {r['reason']:<22} footprint {r['footprint_gb']:6.2f} GB  "
                  f"peak {r['peak_gb']:6.2f} GB ({r['peak_phase']})  {wall:5.1f} s", flush=True)

    ran = [r for r in rows if not r["status"].startswith("not run")]
    internal = [r for r in ran if r["status"] in ("internal_error", "sweep_timeout", "no_json")]
    oom = [r for r in ran if r["oom"] and not r["reason"] == "candidate_oom"]
    ratios = [r["ratio"] for r in ran if r["ratio"]]
    verdicts = {}
    for r in ran:
        verdicts[r["status"]] = verdicts.get(r["status"], 0) + 1
    natives = [r for r in ran if r["candidate"].startswith("native")]
    native_ok = all(r["status"] == "correct" for r in natives)
    summary = (f"sweep: {len(ran)} of {len(rows)} evaluations on {gpu}: {len(internal)} internal_error, {len(oom)} out of "
               f"memory; verdicts {', '.join(f'{k} {v}' for k, v in sorted(verdicts.items()))}; peak/footprint max "
               f"{max(ratios, default=0):.2f}x, median {statistics.median(ratios) if ratios else 0:.2f}x"
               + (f"; native ReLU and Softmax {'correct' if native_ok else 'NOT correct'}" if natives else ""))
    if parts > 1:
        tag += f"_part{part}of{parts}"
    with open(os.path.join(args.out, f"sweep_{tag}.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(args.out, f"sweep_{tag}.md"), "w") as f:
        f.write(f"{summary}\n\n| problem | candidate | verdict | reason | footprint GB | peak GB | peak/footprint | "
                f"peak phase | s |\n|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            ratio = f"{r['ratio']:.2f}x" if r["ratio"] else ""
            f.write(f"| {r['problem']} | {r['candidate']} | {r['status']} | {r['reason']} | {r['footprint_gb']:.2f} | "
                    f"{r['peak_gb']:.2f} | {ratio} | {r['peak_phase']} | {r['wall_s']:.1f} |\n")
    print(summary)
    return 0 if not internal and not oom and native_ok and len(ran) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
