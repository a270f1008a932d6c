"""8 episodes at once through the TRL and the verl adapters against `kagent serve` evaluating on
the GPU, against one episode alone: the wall time of the 8 over the one's (target: under 2x).

usage: adapters_gpu.py --kagent K --kernelbench KB --problems LIST --out DIR
                       [--episodes 8] [--model-s 15] [--workers N] [--compile-only]

The problems: the first --episodes of LIST (bench/collect/problems.txt: KernelBench problems with
the smallest footprint, at their official sizes), linked into a suite folder. Each episode has two
turns with the recorded answers of bench/collect/make_replay.py (KernelBench format: a
reference-wrapping ModelNew, then a Triton kernel or the reference shifted), so every verdict is
real (rejected, correct, wrong), none compiled-not-run. A replay has no model: --model-s is the
time the trainer's model takes to write each answer, slept on the trainer's side before each step
(what makes concurrent episodes worth having: one episode's GPU work is a fraction of its time).

The adapters run as their trainers run them (tests/python/adapter_driver.py): verl's
interactions as coroutines on one event loop, TRL's environments on a thread pool as
AsyncGRPOTrainer does. Where verl is not installed its BaseInteraction is a stand-in with verl's
constructor; the adapter's code is the same.

First every problem is seen once (loaded, eager baseline measured; not timed), then per adapter:
one episode alone, then --episodes at once. Prints one summary line and exits 1 when either
ratio is 2x or more, or a verdict did not run on the GPU.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "tests", "python"), os.path.join(ROOT, "bench", "collect")]

from adapter_driver import run_trl, run_verl, use_verl_stand_in  # noqa: E402
from kagent_env import KagentClient  # noqa: E402
from make_replay import answer, reference_wrapper  # noqa: E402


def episode_answers(kb, rel):
    """The two turns make_replay.py records for the problem."""
    source = open(os.path.join(kb, rel)).read()
    name = os.path.splitext(os.path.basename(rel))[0]
    kernel = os.path.join(ROOT, "bench", "collect", "kernels", name + ".py")
    first = answer(reference_wrapper(source), "A ModelNew that reuses the reference.")
    if os.path.isfile(kernel):
        second = answer(open(kernel).read(), "A Triton kernel for the whole forward.")
    else:
        second = answer(reference_wrapper(source, shift=True), "The reference, shifted.")
    return [first, second]


def start_server(kagent, suite, data, workers, log, compile_only):
    args = [kagent, "serve", "--data", data, "--problems", suite, "--port", "0", "--no-compile-baseline",
            "--gpus", ",".join(str(g) for g in range(workers))] + (["--compile-only"] if compile_only else [])
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    info = os.path.join(data, "server.json")
    deadline = time.monotonic() + 300
    url, health = None, {}
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"adapters_gpu: kagent serve exited with status {proc.returncode} (log: {log.name})")
        if url is None and os.path.exists(info):
            url = f"http://127.0.0.1:{json.load(open(info))['port']}"
        if url:
            health = KagentClient(url).health()
            if health.get("status") == "ok":
                return proc, url, health
            if health.get("status") not in ("starting", None):
                sys.exit(f"adapters_gpu: kagent serve is not ok: {health}")
        time.sleep(0.5)
    sys.exit(f"adapters_gpu: kagent serve did not become ready in 300 s: {health}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kagent", required=True)
    ap.add_argument("--kernelbench", required=True)
    ap.add_argument("--problems", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--model-s", type=float, default=15.0)
    ap.add_argument("--workers", type=int, default=1, help="GPU workers (GPUs 0..N-1)")
    ap.add_argument("--compile-only", action="store_true",
                    help="a dry run of the script without a GPU (kagent serve --compile-only); the target is not judged")
    args = ap.parse_args()

    rel = [l.strip() for l in open(args.problems) if l.strip() and not l.startswith("#")][: args.episodes]
    suite = os.path.join(args.out, "adapters-suite")
    tasks, answers = [], {}
    for r in rel:
        os.makedirs(os.path.join(suite, os.path.dirname(r)), exist_ok=True)
        link = os.path.join(suite, r)
        if not os.path.lexists(link):
            os.symlink(os.path.join(os.path.abspath(args.kernelbench), r), link)
        task = os.path.splitext(r)[0]  # "level1/19_ReLU"
        tasks.append(task)
        answers[task] = episode_answers(args.kernelbench, r)
    stand_in = use_verl_stand_in()
    log = open(os.path.join(args.out, "serve_adapters.log"), "w")
    proc, url, health = start_server(args.kagent, suite, os.path.join(args.out, "adapters-data"), args.workers, log,
                                     args.compile_only)
    try:
        print(f"kagent serve on {health['device']}, {health['workers']} worker(s), {health['tasks']} tasks; "
              f"verl {'stand-in (not installed)' if stand_in else 'installed'}", flush=True)
        # Every problem seen once (loaded, eager baseline), at once; not timed.
        client = KagentClient(url)
        t0 = time.monotonic()

        def warm(task):
            ep = client.create_episode(task, format="kernelbench", max_turns=1)
            out = client.step(ep["episode_id"], answers[task][0])
            client.delete_episode(ep["episode_id"])
            return out["metadata"]["status"]

        with ThreadPoolExecutor(len(tasks)) as pool:
            warm_statuses = list(pool.map(warm, tasks))
        print(f"warm-up: {len(tasks)} problems in {time.monotonic() - t0:.1f} s: {warm_statuses}", flush=True)

        results, verdicts, problems = {}, {}, []
        for name, run in (("trl", run_trl), ("verl", run_verl)):
            one = run(url, None, tasks[:1], answers, 1, args.model_s, "kernelbench")
            many = run(url, None, tasks, answers, args.episodes, args.model_s, "kernelbench")
            ratio = many.wall_s / one.wall_s
            results[name] = (many.wall_s, one.wall_s, ratio, many.all_in_flight_at_once())
            for e in one.episodes + many.episodes:
                if any(r is None for r in e.rewards) and not args.compile_only:
                    problems.append(f"{name}: a step was not run on the GPU")
                for s in e.statuses:
                    if name == "verl":
                        verdicts[s] = verdicts.get(s, 0) + 1
            print(f"{name}: one episode {one.wall_s:.1f} s; {args.episodes} at once {many.wall_s:.1f} s ({ratio:.2f}x), "
                  f"all in flight at once: {many.all_in_flight_at_once()}; "
                  f"step times {[round(b - a, 1) for e in many.episodes for a, b in e.steps]}", flush=True)
        left = KagentClient(url).health()["episodes_open"]
        if left:
            problems.append(f"{left} episode(s) left open")
        if any(s in ("compiled_not_run", "not_run") for s in verdicts) and not args.compile_only:
            problems.append("a verdict was not run")
        ok = not problems and all(r[2] < 2.0 for r in results.values())
        print(f"serve adapters: {args.episodes} episodes at once vs one: "
              + ", ".join(f"{n} {m:.1f} s vs {o:.1f} s ({r:.2f}x)" for n, (m, o, r, _) in results.items())
              + f"; target under 2x: {'not judged (compile-only dry run)' if args.compile_only else 'met' if ok else 'NOT met'} "
              f"({len(tasks)} KernelBench problems, 2 turns, "
              f"model {args.model_s:g} s an answer, {health['workers']} worker(s) on {health['device']}; "
              f"verl verdicts {json.dumps(verdicts, sort_keys=True)}; episodes left open {left})"
              + (f"; problems: {problems}" if problems else ""), flush=True)
        if args.compile_only:
            return 0 if not problems else 1
        return 0 if ok else 1
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


if __name__ == "__main__":
    sys.exit(main())
