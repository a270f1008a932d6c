#!/usr/bin/env python3
"""Compile time and compiler memory of one native candidate, measured through `kagent eval`.

Runs `kagent eval PROBLEM CANDIDATE --json --no-compile-cache` RUNS times in one fresh cache
folder (the first run also builds the host registration object, which later runs and every other
candidate with the same argument types reuse) and samples /proc every 50 ms for kagent's
descendants: the peak of the summed resident sets of the compiler processes (nvcc, cudafe++, cicc,
cc1plus, ptxas, fatbinary, nvlink, ld, collect2, as, gcc/g++) is the tree's peak;
`compile.peak_rss_mb` in the result is the largest single process (the kernel's rusage). On a
machine without a GPU the worker says so after the compile, which is what is measured. Limits:
KAGENT_COMPILE_TIMEOUT / KAGENT_COMPILE_MEMORY_MB as set by the caller. Prints one JSON line per
run, then a markdown table.

usage: compile_bench.py KAGENT PROBLEM CANDIDATE [--label TEXT] [--runs N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

COMPILER_NAMES = {"nvcc", "cudafe++", "cicc", "cc1plus", "ptxas", "fatbinary", "nvlink", "ld", "collect2", "as",
                  "gcc", "g++", "x86_64-linux-gnu-g++-12", "x86_64-linux-gnu-gcc-12", "cc1"}


def children_map():
    kids = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2:].split()
        kids.setdefault(int(rest[1]), []).append(int(pid))
    return kids


def tree_rss_kb(root):
    """Summed VmRSS of the compiler processes among root's descendants, and their names."""
    kids = children_map()
    total, names, stack = 0, set(), [root]
    while stack:
        pid = stack.pop()
        stack.extend(kids.get(pid, []))
        if pid == root:
            continue
        try:
            with open(f"/proc/{pid}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        name = status.get("Name", "").strip()
        if name in COMPILER_NAMES:
            total += int(status.get("VmRSS", "0 kB").split()[0] or 0)
            names.add(name)
    return total, names


def run_once(a, cache, label):
    env = dict(os.environ, KAGENT_CACHE_DIR=cache)
    start = time.monotonic()
    proc = subprocess.Popen([a.kagent, "eval", a.problem, a.candidate, "--json", "--no-compile-cache",
                             "--cache-dir", cache], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    peak_kb, seen = 0, set()
    while proc.poll() is None:
        kb, names = tree_rss_kb(proc.pid)
        peak_kb = max(peak_kb, kb)
        seen |= names
        time.sleep(0.05)
    out, err = proc.communicate()
    wall = time.monotonic() - start
    try:
        result = json.loads(out)
    except json.JSONDecodeError:
        print(f"kagent printed no JSON (exit {proc.returncode}): {err.decode()[-2000:]}", file=sys.stderr)
        return None
    c = result.get("compile") or {}
    if not c.get("ok"):
        print((c.get("errors") or "")[:1500], file=sys.stderr)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    return {
        "label": label,
        "compile_ok": c.get("ok"),
        "limit": c.get("limit", ""),
        "compile_s": round(c.get("seconds", 0), 1),
        "largest_process_mb": c.get("peak_rss_mb", 0),
        "compiler_tree_peak_mb": round(peak_kb / 1024),
        "kagent_wall_s": round(wall, 1),
        "load_after": load,
        "status": result.get("status"),
        "processes_seen": sorted(seen),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kagent")
    ap.add_argument("problem")
    ap.add_argument("candidate")
    ap.add_argument("--label", default="")
    ap.add_argument("--runs", type=int, default=1)
    a = ap.parse_args()
    label = a.label or os.path.basename(a.candidate)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kagent_compile_bench_") as cache:
        for i in range(a.runs):
            row = run_once(a, cache, f"{label}, run {i + 1}{' (registration built too)' if i == 0 else ''}")
            if row is None:
                return 1
            print(json.dumps(row), flush=True)
            rows.append(row)
    print("\n| run | compiled | limit | compile s | largest process MB | compiler tree peak MB | load after |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['label']} | {r['compile_ok']} | {r['limit'] or '-'} | {r['compile_s']} | {r['largest_process_mb']} "
              f"| {r['compiler_tree_peak_mb']} | {r['load_after']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
