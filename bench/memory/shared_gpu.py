"""Processes that share a GPU: 4 `kagent eval` processes at once (what `xargs -P 4` does) over the
10 level-1 KernelBench problems with the largest footprint (largest50.txt; 12.9 to 17.3 GB at
their official sizes, 46 to 73 GB at their evaluation's peak), each with an honest native kernel
(bench/memory/kernels/, relu.cu). On an 80 GB H100 no two of them fit at once: the processes
must queue for the GPU's memory (tools/worker/client/gpu_admission.h) instead of running out of
it. It passes when every verdict is correct, none is an out-of-memory or internal_error, and
every evaluation that waited for memory said so on its console.

usage: python3 bench/memory/shared_gpu.py --kagent build-gpu/kagent --kernelbench DIR --out OUT [--jobs 4]
Writes OUT/shared_gpu.jsonl (one result per problem, with its console lines) and prints one
summary line ("Shared GPU: ..."). Exit status 0 when it passes, 1 when not, 77 without a GPU.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = {
    "level1/45_Average_Pooling_2D.py": "kernels/avg_pool_2d_k11.cu",
    "level1/38_L1Norm_.py": "kernels/l1_norm.cu",
    "level1/39_L2Norm_.py": "kernels/l2_norm.cu",
    "level1/35_GroupNorm_.py": "kernels/group_norm.cu",
    "level1/34_InstanceNorm.py": "kernels/instance_norm.cu",
    "level1/36_RMSNorm_.py": "kernels/rms_norm.cu",
    "level1/37_FrobeniusNorm_.py": "kernels/frobenius_norm.cu",
    "level1/76_conv_standard_1D_dilated_strided__.py": "kernels/conv1d_dilated_strided.cu",
    "level1/87_conv_pointwise_2D.py": "kernels/conv_pointwise_2d.cu",
    "level1/19_ReLU.py": "relu.cu",
}
# The evaluation's own cost is not what this checks: one trial, no timing, baselines or profile
# (the guards, whose phase holds the peak, run as always).
FLAGS = ["--json", "--trials", "1", "--no-timing", "--no-baselines", "--no-profile", "--timeout", "600"]
WAIT_LINE = "waiting for GPU memory"


def largest_level1(count):
    rows = []
    for line in open(os.path.join(HERE, "largest50.txt")):
        size, rel = line.split()
        if rel.startswith("level1/"):
            rows.append((int(size), rel))
    return rows[:count]


def evaluate(kagent, kernelbench, rel):
    started = time.monotonic()
    cmd = [kagent, "eval", os.path.join(kernelbench, rel), os.path.join(HERE, KERNELS[rel])] + FLAGS
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=1500)
        result = json.loads(run.stdout[run.stdout.index("{"):])
        console = run.stderr
    except (subprocess.TimeoutExpired, ValueError) as e:
        result, console = {"status": "no_answer", "reason": "", "message": str(e)[:300]}, ""
    return {"problem": rel, "started": started, "ended": time.monotonic(), "result": result,
            "console": [line for line in console.splitlines() if line.startswith("kagent:")]}


def oom(result):
    text = json.dumps(result).lower()
    return result.get("reason", "").endswith("_oom") or "out of memory" in text


def gpu_name():
    try:
        run = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30)
        return run.stdout.strip().splitlines()[0] if run.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kagent", required=True)
    ap.add_argument("--kernelbench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=4, help="kagent eval processes at once")
    ap.add_argument("--problems", type=int, default=10)
    args = ap.parse_args()
    gpu = gpu_name()
    if not gpu:
        print("SKIPPED: no GPU visible (nvidia-smi failed)")
        return 77
    os.makedirs(args.out, exist_ok=True)
    kagent = os.path.abspath(args.kagent)
    problems = largest_level1(args.problems)
    missing = [rel for _, rel in problems if rel not in KERNELS]
    if missing:
        print(f"shared_gpu: no kernel for {missing}", file=sys.stderr)
        return 1
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda p: evaluate(kagent, os.path.abspath(args.kernelbench), p[1]), problems))
    wall = time.monotonic() - t0
    with open(os.path.join(args.out, "shared_gpu.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")

    verdicts, failures = {}, []
    waited = announced = ooms = internal = 0
    longest = 0.0
    peak_together = max(sum(1 for o in rows if o["started"] <= r["started"] < o["ended"]) for r in rows)
    for r in rows:
        res = r["result"]
        status = res.get("status", "?")
        verdicts[status] = verdicts.get(status, 0) + 1
        wait = (res.get("isolation") or {}).get("memory_wait_seconds", 0.0)
        said = any(WAIT_LINE in line for line in r["console"])
        waited += wait > 0
        announced += wait > 0 and said
        longest = max(longest, wait)
        ooms += oom(res)
        internal += status == "internal_error"
        name = os.path.basename(r["problem"])
        print(f"{name:<48} {status:<14} {res.get('reason', ''):<16} waited {wait:6.1f} s  "
              f"{r['ended'] - r['started']:6.1f} s  {res.get('message', '')[:80]}")
        for line in r["console"]:
            print(f"    {line[:160]}")
        if status != "correct":
            failures.append(f"{name}: {status} {res.get('reason', '')}: {res.get('message', '')[:200]}")
        if wait > 0 and not said:
            failures.append(f"{name}: waited {wait:.1f} s for GPU memory without saying so")
    ok = not failures and ooms == 0 and internal == 0
    print(f"Shared GPU: {len(rows)} problems by {args.jobs} kagent eval processes at once ({peak_together} running "
          f"together at most) on {gpu}: verdicts " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) +
          f"; {ooms} out of memory, {internal} internal_error; {waited} waited for GPU memory (the console said so "
          f"{announced} times, longest {longest:.0f} s); {wall:.0f} s -> {'OK' if ok else 'FAILED'}")
    for f in failures:
        print("FAIL", f)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
