"""The stall test (issue 46): a slow candidate pays for its own time, not for the GPU's.

One GPU, one `kagent collect` of real leaderboard answers that KernelBench's harness and kagent
both judge correct (bench/fidelity/kagent_verdicts.jsonl), first alone, then with one more answer
beside them: a copy of the first that spends SLOW_S seconds of host CPU in its first call (a busy
loop, as a policy's host loops or a cuDNN autotune do), then computes as the original. The
compile cache is filled by a warm-up run first, so both measured runs time evaluations, not nvcc.

It passes when every honest answer's verdict with the slow one beside it equals its verdict alone,
and the honest answers' evaluation time (the worker's, lock waits included: `eval_seconds`) is at
most RATIO (1.2) times its time alone, summed over them. The alone and beside runs alternate PAIRS
times (default 3) and the medians are compared: one alone run against one beside run could not
tell 1.2x from 1.0x, since the alone run itself moved by +-12% between runs on an H200 (14.3, 13.6
and 16.8 s; tests/gpu/RESULTS.md, fortieth session). Without the idle release a slow first
call holds the GPU's lock shared for its whole length, and every timing of the GPU waits behind
it; the release is on by default (100 ms), and `KAGENT_GPU_IDLE_RELEASE_MS=0` in the environment
(which the workers inherit) turns it off, for the comparison.

usage: python3 tests/gpu/stall/stall.py --kagent build/kagent --out OUT [--honest 20] [--slow-s 30] [--pairs 3]
prints one summary line ("Stall: ..."); exit 0 pass, 1 fail, 77 no GPU (skipped).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "collect"))
from collection_turns import first_evals, lock_wait, verdict  # noqa: E402

FLAGS = ["--format", "kernelbench", "-n", "1", "-t", "1", "--no-baselines", "--no-profile", "--order", "interleaved"]
SLOW_NAME = "a0_slow_first_call"  # sorts first: it starts while every honest answer is still queued

# Appended to the copy: the first call spins on the host, then the original forward runs.
SLOW_PATCH = """

import time as _kagent_stall_time
_kagent_stall_forward = ModelNew.forward
_kagent_stall_done = []


def _kagent_stall_first_call(self, *args, **kwargs):
    if not _kagent_stall_done:
        _kagent_stall_done.append(1)
        end = _kagent_stall_time.process_time() + {slow_s}
        while _kagent_stall_time.process_time() < end:
            pass
    return _kagent_stall_forward(self, *args, **kwargs)


ModelNew.forward = _kagent_stall_first_call
"""


def honest_answers(realworld, count):
    """The first `count` level-1/2 answers both kagent and KernelBench's harness judged correct."""
    rows = [json.loads(line) for line in open(os.path.join(ROOT, "bench/fidelity/kagent_verdicts.jsonl"))]
    ok = [r["answer"] for r in rows if r["kernelbench"][0] == "correct" and (r.get("kernelbench_harness") or {}).get("correct")
          and re.match(r"l[12]_", r["answer"])]
    replay = {}
    for line in open(os.path.join(realworld, "replay.jsonl")):
        e = json.loads(line)
        replay[e["problem"]] = e
    return [(n, replay[n]) for n in sorted(ok) if n in replay][:count]


def write_inputs(out, realworld, answers, slow_s):
    """Problems folders and replay files: `alone` (the honest answers), `beside` (and the slow one)."""
    paths = {}
    for kind in ("alone", "beside"):
        problems = os.path.join(out, f"problems-{kind}")
        os.makedirs(problems)
        lines = []
        for name, entry in answers:
            shutil.copyfile(os.path.join(realworld, "problems", name + ".py"), os.path.join(problems, name + ".py"))
            lines.append(json.dumps(entry))
        if kind == "beside":
            name, entry = answers[0]
            shutil.copyfile(os.path.join(realworld, "problems", name + ".py"), os.path.join(problems, SLOW_NAME + ".py"))
            text = entry["text"]
            fence_end = text.rindex("```")
            slow = dict(entry, problem=SLOW_NAME,
                        text=text[:fence_end].rstrip() + SLOW_PATCH.format(slow_s=slow_s) + "\n" + text[fence_end:])
            lines.insert(0, json.dumps(slow))
        replay = os.path.join(out, f"replay-{kind}.jsonl")
        with open(replay, "w") as f:
            f.write("\n".join(lines) + "\n")
        paths[kind] = (problems, replay)
    return paths


def collect(kagent, problems, replay, dest, cache, timeout, log):
    t0 = time.monotonic()
    with open(log, "w") as f:
        rc = subprocess.run([kagent, "collect", problems, "--llm", "replay:" + replay, "--out", dest,
                             "--cache-dir", cache, *FLAGS], stdout=f, stderr=subprocess.STDOUT, timeout=timeout).returncode
    return rc, time.monotonic() - t0


def lock_line(log):
    lines = [line.strip() for line in open(log) if "timing lock over" in line]
    return lines[-1] if lines else "no timing lock line"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kagent", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--realworld", default=os.environ.get("KAGENT_REALWORLD_DIR",
                                                          os.path.join(ROOT, ".carry/realworld/kb_leaderboard")))
    ap.add_argument("--honest", type=int, default=20)
    ap.add_argument("--slow-s", type=float, default=30)
    ap.add_argument("--ratio", type=float, default=1.2)
    ap.add_argument("--timeout", type=int, default=240, help="seconds for one collection")
    ap.add_argument("--pairs", type=int, default=3, help="alone and beside runs, alternated; the medians are compared")
    args = ap.parse_args()
    if not shutil.which("nvidia-smi") or subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode != 0:
        print("SKIPPED: no GPU visible (nvidia-smi -L failed)")
        return 77
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    answers = honest_answers(args.realworld, args.honest)
    if len(answers) < args.honest:
        print(f"Stall: FAIL: {len(answers)} honest answers found in {args.realworld}, {args.honest} wanted")
        return 1
    paths = write_inputs(out, args.realworld, answers, args.slow_s)
    cache = os.path.join(out, "cache")
    kagent = os.path.abspath(args.kagent)
    runs = {}
    order = [("warm", "alone")] + [(f"{kind}{i}", kind) for i in range(1, max(1, args.pairs) + 1)
                                   for kind in ("alone", "beside")]
    for kind, src in order:
        rc, wall = collect(kagent, *paths[src], os.path.join(out, kind), cache, args.timeout,
                           os.path.join(out, f"collect-{kind}.log"))
        runs[kind] = (rc, wall, first_evals(os.path.join(out, kind)))
        print(f"stall: {kind}: collect rc={rc} in {wall:.1f} s; {lock_line(os.path.join(out, f'collect-{kind}.log'))}")
    names = [n for n, _ in answers]
    secs = lambda evs: sum((evs.get(n) or {}).get("eval_seconds") or 0 for n in names)
    waits = lambda evs: sum(lock_wait(evs.get(n)) for n in names)
    alones = [runs[k][2] for k in runs if k.startswith("alone")]
    besides = [runs[k][2] for k in runs if k.startswith("beside")]
    # Each side's median run (by the honest answers' summed time) stands for it: its verdicts,
    # times and lock waits are the ones reported and compared.
    alone = sorted(alones, key=secs)[(len(alones) - 1) // 2]
    beside = sorted(besides, key=secs)[(len(besides) - 1) // 2]
    changed = sorted({n for a in alones for b in besides for n in names if verdict(a.get(n)) != verdict(b.get(n))})
    t_alone, t_beside = secs(alone), secs(beside)
    ratio = t_beside / t_alone if t_alone else float("inf")
    print("stall: honest answers' seconds by run: alone " + ", ".join(f"{secs(e):.1f}" for e in alones) +
          "; beside " + ", ".join(f"{secs(e):.1f}" for e in besides))
    slow = beside.get(SLOW_NAME) or {}
    with open(os.path.join(out, "stall.json"), "w") as f:
        json.dump({"names": names, "alone": {n: alone.get(n) for n in names}, "beside": {n: beside.get(n) for n in names},
                   "slow": slow}, f, indent=1)
    for n in names:
        a, b = (alone.get(n) or {}), (beside.get(n) or {})
        print(f"  {n:28s} {verdict(a)[0]:>10s} {a.get('eval_seconds') or 0:7.2f} s alone, {verdict(b)[0]:>10s} "
              f"{b.get('eval_seconds') or 0:7.2f} s beside (lock wait {lock_wait(b):6.2f} s)")
    ok = not changed and ratio <= args.ratio and all(r[0] == 0 for r in runs.values())
    idle = os.environ.get("KAGENT_GPU_IDLE_RELEASE_MS") or "unset (100)"
    print(f"Stall: {'PASS' if ok else 'FAIL'}: KAGENT_GPU_IDLE_RELEASE_MS={idle}: {len(names)} honest answers took {t_beside:.1f} s beside a "
          f"{args.slow_s:.0f} s host-bound first call against {t_alone:.1f} s alone (medians of {len(besides)} and {len(alones)} runs; "
          f"{ratio:.2f}x, at most {args.ratio}x), "
          f"lock waits {waits(beside):.1f} s against {waits(alone):.1f} s; verdicts changed: {len(changed)}"
          f"{' (' + ', '.join(changed) + ')' if changed else ''}; the slow one: {verdict(slow)[0]} in "
          f"{slow.get('eval_seconds') or 0:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
