"""Issue 48's GPU check: `kagent serve --queue redis://` with one node, then two nodes (one GPU
each, their own processes and ports, one Redis), over the same leaderboard answers.

Each phase has its own redis-server, data folders and compile/baseline cache (shared by the
phase's nodes, as a shared folder would be), so neither phase profits from the other's work.
The answers go to /v1/evaluate (KernelBench format, a request_id each), `--concurrency` at a
time, round-robin over the phase's fronts, after one untimed answer per node (what a machine does
once: its precompiled headers, its workers' first contexts), in one seeded shuffled order (as a trainer's batch
comes; sorted by name, one level's answers would all come last). It prints, for each phase, the
answers a minute and the verdicts, then the ratio and how many verdicts are equal; then where each
phase's wall went: until the first answer (compiles, the first baselines), the middle 80% of the
answers (the steady rate) and the last 10% (the slowest answers, which no second node shortens),
and each node's jobs; the phases of the evaluations summed (the replies' phase_seconds and lock
waits), and each node's workers and GPU lock over the batch (its /metrics before and after: the
workers' seconds evaluating, held and loading, restarts, the lock exclusive, shared and free).
Each request's times are in OUT/PHASE/requests.jsonl, with where they went (the reply's build,
evaluation, phase and node seconds; the queue's is the rest).
  cluster: 1 node: 100 answers in 80.1 s (74.9/min); 2 nodes: ... ; 1.93x; verdicts equal 100 of 100
On a GPU, each node is pinned to its own share of the host's CPUs (`--cpus-per-node`, default
the host's CPUs over the GPUs), the one node of the first phase too: a node stands for a machine
with one GPU and its own cores, so the second node brings its compilers with it as a machine would.
`--compile-only` runs the same on a machine without a GPU (a dry run of the plumbing; the
ratio there says nothing). The GPU run: bash scripts/gpu_call.sh serve-cluster (the 2-GPU kind).
  python3 bench/serve/cluster_nodes.py --kagent build/kagent --out /tmp/cluster [-n 100] [--gpus 0,1]
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests/python"))
from roundtrip import Cluster, default_realworld, make_suite, pick_answers  # noqa: E402

sys.path.insert(0, str(REPO / "bench/fidelity"))
from compare import cause_of  # noqa: E402


def post(url: str, body: dict, timeout: float) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def answers_of(replay: Path) -> dict[str, str]:
    """Each problem's first answer (sample 0, turn 0)."""
    out = {}
    for line in replay.read_text().splitlines():
        row = json.loads(line)
        if row.get("sample", 0) == 0 and row.get("turn", 0) == 0:
            out.setdefault(row["problem"], row["text"])
    return out


def node_cpus(args, i: int) -> set[int] | None:
    """Node i's CPUs: the i-th block of --cpus-per-node of those this process may use."""
    if not args.cpus_per_node:
        return None
    mine = sorted(os.sched_getaffinity(0))
    block = mine[i * args.cpus_per_node:(i + 1) * args.cpus_per_node]
    if len(block) < args.cpus_per_node:
        raise SystemExit(f"cluster_nodes: node {i} needs CPUs {i * args.cpus_per_node}..{(i + 1) * args.cpus_per_node - 1} "
                         f"of the {len(mine)} this process has")
    return set(block)


def phase(args, tag: str, gpus: list[str], suite: Path, answers: dict[str, str]) -> tuple[float, dict[str, str]]:
    root = args.out / tag
    cluster = Cluster(args.kagent, root, suite, dict(os.environ, KAGENT_CACHE_DIR=str(root / "cache")), args.compile_only,
                      len(gpus), args.redis_server, extra=["--format", "kernelbench", *args.serve_arg],
                      node_env=lambda i: {} if args.compile_only else {"CUDA_VISIBLE_DEVICES": gpus[i]},
                      node_cpus=lambda i: node_cpus(args, i))
    try:
        fronts = [url for url, _ in cluster.wait_ready()]
        names = sorted(answers)
        # Each answer --repeat times (an RL step's several rollouts of one prompt), one shuffled order.
        order = [(k, r) for r in range(args.repeat) for k in range(len(names))]
        random.Random(args.seed).shuffle(order)
        retries: list[str] = []
        per_policy: dict[str, dict[str, str]] = {}  # answer -> policy -> verdict (the body's `verdicts`)
        # Once per node, untimed: what a machine does once in its life (the per-machine precompiled
        # headers, each worker's first CUDA context), which a phase with a fresh cache would
        # otherwise count against throughput. One answer on each front; later a cache hit.
        tw = time.monotonic()
        for i, front in enumerate(fronts):
            post(front + "/v1/evaluate", {"task_id": names[order[0][0]], "kernel_code": answers[names[order[0][0]]],
                                          "format": "kernelbench", "request_id": f"{tag}-warmup-{i}"}, timeout=1800)
        print(f"cluster: {tag}: warm-up (one answer per node, not timed) {time.monotonic() - tw:.1f} s", flush=True)
        before = [node_metrics(f) for f in fronts]
        t0 = time.monotonic()

        def one(item: tuple[int, int]):
            k, rep = item
            name = names[k]
            start = time.monotonic()
            request = {"task_id": name, "kernel_code": answers[name], "format": "kernelbench",
                       "request_id": f"{tag}-{name}" + (f"-{rep}" if rep else "")}
            # A lost connection is asked again, as a trainer would, on the next front with the same
            # request_id: the cluster answers it once. Each retry is counted and printed.
            for attempt in range(3):
                try:
                    status, body = post(fronts[(k + attempt) % len(fronts)] + "/v1/evaluate", request, timeout=1800)
                    break
                except (ConnectionError, urllib.error.URLError) as e:
                    retries.append(f"{name}: {e!r}")
            else:
                return Answered(name, rep, "lost", start, time.monotonic())
            if status != 200:
                return Answered(name, rep, f"http {status} {body.get('error', {}).get('code', '')}", start, time.monotonic())
            if rep == 0:
                per_policy[name] = {p: verdict_text(v) for p, v in (body.get("verdicts") or {}).items()}
            end = time.monotonic()
            # One line per answer as it comes (not "cluster:", which the suite's summary greps): a
            # phase a deadline cuts still says in its log what it finished and how long each took.
            print(f"cluster-progress: {tag}: {name} {verdict_text(body)} in {end - start:.1f} s, at {end - t0:.1f} s",
                  flush=True)
            return Answered(name, rep, verdict_text(body), start, end, seconds_of(body, end - start))

        with ThreadPoolExecutor(args.concurrency) as pool:
            done = list(pool.map(one, order))
        wall = time.monotonic() - t0
        # The verdicts compared between phases are each answer's first sending's (a racy answer may
        # differ between its own repeats; those are counted apart).
        verdicts = {d.name: d.verdict for d in done if d.repeat == 0}
        own = {}
        for d in done:
            own.setdefault(d.name, set()).add(d.verdict)
        unsteady = sorted(n for n, v in own.items() if len(v) > 1)
        if unsteady:
            print(f"cluster: {tag}: {len(unsteady)} answers got more than one verdict over their repeats: "
                  + ", ".join(f"{n} {sorted(own[n])}" for n in unsteady[:10]), flush=True)
        with open(root / "requests.jsonl", "w") as f:
            for d in done:
                f.write(json.dumps({"answer": d.name, "repeat": d.repeat, "verdict": d.verdict,
                                    "sent_s": round(d.start - t0, 3), "answered_s": round(d.end - t0, 3), **d.seconds}) + "\n")
        ends = sorted(d.end - t0 for d in done)
        lo, hi = ends[len(ends) // 10], ends[len(ends) * 9 // 10 - 1]
        steady = (len(ends) * 9 // 10 - len(ends) // 10) / (hi - lo) * 60 if hi > lo else float("nan")
        jobs = cluster.jobs_per_node()
        print(f"cluster: {tag}: first answer at {ends[0]:.1f} s; middle 80% at {steady:.1f}/min "
              f"({lo:.1f}-{hi:.1f} s); last 10% took {wall - hi:.1f} s; jobs per node {jobs}", flush=True)
        print(f"cluster: {tag}: {where_time_went(done)}", flush=True)
        print(f"cluster: {tag}: {phase_sums(done)}", flush=True)
        for i, front in enumerate(fronts):
            print(f"cluster: {tag}: node {i + 1} over the batch: {node_use(before[i], node_metrics(front), wall)}", flush=True)
        for r in retries:
            print(f"cluster: {tag}: asked again after {r}", flush=True)
    finally:
        cluster.stop()
    with open(root / "verdicts.json", "w") as f:
        json.dump(verdicts, f, indent=1, sort_keys=True)
    # What a later call, running only the other phase (--phases), reads back.
    with open(root / "result.json", "w") as f:
        json.dump({"wall_s": wall, "requests": len(order), "verdicts": verdicts, "per_policy": per_policy,
                   "batch": batch_of(args, answers)}, f, indent=1, sort_keys=True)
    return wall, verdicts


def node_metrics(front: str) -> dict[str, float]:
    """The node's /metrics counters that say where its workers' and GPU's time went (summed over
    its GPUs), by series name with its labels; {} when the node does not answer."""
    try:
        with urllib.request.urlopen(front + "/metrics", timeout=10) as r:
            text = r.read().decode()
    except (OSError, urllib.error.URLError):
        return {}
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, value = line.rsplit(" ", 1)
        if name.startswith("kagent_serve_gpu_lock_seconds_total"):
            name = "gpu_lock_" + name.split('mode="', 1)[1].split('"', 1)[0]
        elif not name.startswith(("kagent_serve_worker_", "kagent_serve_evaluations_total", "kagent_serve_workers")):
            continue
        try:
            out[name] = out.get(name, 0.0) + float(value)
        except ValueError:
            pass
    return out


def node_use(before: dict[str, float], after: dict[str, float], wall: float) -> str:
    """What one node's workers and GPU lock did between the batch's start and its end: the
    counters' differences, against the workers' seconds the wall offered."""
    if not before or not after:
        return "no /metrics"
    d = lambda k: after.get(k, 0.0) - before.get(k, 0.0)
    state = lambda s: d(f'kagent_serve_worker_seconds_total{{state="{s}"}}')
    workers = int(after.get("kagent_serve_workers", 0))
    return (f"{d('kagent_serve_evaluations_total'):.0f} evaluations; {workers} workers x {wall:.1f} s = {workers * wall:.1f} "
            f"worker-seconds: evaluating {state('evaluating'):.1f}, held {state('held'):.1f} (loading problems "
            f"{state('loading'):.1f}), free while a request waited {state('idle_while_queued'):.1f}; restarts "
            f"{d('kagent_serve_worker_restarts_total'):.0f}; GPU lock exclusive {d('gpu_lock_exclusive'):.1f} s, "
            f"shared {d('gpu_lock_shared'):.1f} s, free {d('gpu_lock_free'):.1f} s")


class Answered(NamedTuple):
    """One request of a phase, as its client saw it."""
    name: str
    repeat: int
    verdict: str
    start: float
    end: float
    seconds: dict = {}  # seconds_of's parts, where the reply had them


def seconds_of(body: dict, client_s: float) -> dict:
    """Where one answer's time went, from the reply's seconds: the build, the worker's evaluation,
    the rest of the node's time (its problem's opening where it outlasted the build beside it, the
    wait for a worker) and the queue's (the client's time beyond the node's)."""
    compile_s, eval_s, job_s = (body.get(k) for k in ("compile_seconds", "eval_seconds", "job_seconds"))
    if not isinstance(job_s, (int, float)):
        return {}
    compile_s = compile_s if isinstance(compile_s, (int, float)) else 0.0
    eval_s = eval_s if isinstance(eval_s, (int, float)) else 0.0
    phases = body.get("phase_seconds") if isinstance(body.get("phase_seconds"), dict) else {}
    lock_wait = body.get("lock_wait_seconds")
    return {"compile_s": round(compile_s, 3), "eval_s": round(eval_s, 3),
            "node_other_s": round(max(0.0, job_s - compile_s - eval_s), 3), "queue_s": round(max(0.0, client_s - job_s), 3),
            "lock_wait_s": round(lock_wait, 3) if isinstance(lock_wait, (int, float)) else None,
            "phases": {k: round(v, 3) for k, v in phases.items() if isinstance(v, (int, float))}}


def where_time_went(done: list[Answered]) -> str:
    """Medians of seconds_of's parts over the first 16 answers to come back (the start of a batch,
    the part a second node does not shorten) and over all."""
    def medians(rows):
        rows = [d.seconds for d in rows if d.seconds]
        if not rows:
            return "no seconds in the replies"
        med = lambda k: sorted(r[k] for r in rows)[len(rows) // 2]
        return (f"queue {med('queue_s'):.1f} s, build {med('compile_s'):.1f} s, the rest (opening, worker wait) "
                f"{med('node_other_s'):.1f} s, evaluation {med('eval_s'):.1f} s")
    first = sorted(done, key=lambda d: d.end)[:16]
    return f"medians, first 16 answers: {medians(first)}; all: {medians(done)}"


def phase_sums(done: list[Answered]) -> str:
    """The evaluations' phases summed (the reply's phase_seconds), with the lock waits inside
    them, over the first 16 answers and over all: which phase a second node makes dearer (a
    problem new to its workers) and what the first answers spent."""
    def sums(rows):
        rows = [d.seconds for d in rows if d.seconds.get("phases")]
        if not rows:
            return "no phase seconds in the replies"
        total: dict[str, float] = {}
        for r in rows:
            for k, v in r["phases"].items():
                total[k] = total.get(k, 0.0) + v
        waits = sum(r.get("lock_wait_s") or 0.0 for r in rows)
        return ", ".join(f"{k} {v:.1f}" for k, v in total.items()) + f"; lock waits {waits:.1f} s"
    first = sorted(done, key=lambda d: d.end)[:16]
    return f"phases summed, first 16 answers: {sums(first)}; all: {sums(done)}"


def verdict_text(v: dict) -> str:
    return f"{v.get('status')} {v.get('reason') or ''}".strip()


def batch_of(args, answers: dict[str, str]) -> dict:
    """What makes two phases comparable: the same answers (their code too), problems and sendings."""
    code = hashlib.sha256("\0".join(f"{n}\0{answers[n]}" for n in sorted(answers)).encode()).hexdigest()
    return {"answers": len(answers), "answers_sha256": code, "kernelbench": str(args.kernelbench or ""),
            "repeat": args.repeat, "seed": args.seed}


def load_phase(args, tag: str, answers: dict[str, str]) -> tuple[float, dict[str, str]]:
    path = args.out / tag / "result.json"
    if not path.is_file():
        raise SystemExit(f"cluster_nodes: phase {tag} was not run here and {path} holds no earlier run of it")
    r = json.loads(path.read_text())
    # A folder on a machine that outlived its lease once held another set's phase (CUDA-L1's, read
    # beside the leaderboard's): a ratio between two batches means nothing.
    batch = batch_of(args, answers)
    if r.get("batch") != batch:
        raise SystemExit(f"cluster_nodes: {path} is of another batch ({r.get('batch')}), not this call's "
                         f"({batch}): run phase {tag} again")
    print(f"cluster: {tag}: read from an earlier call ({path})", flush=True)
    return r["wall_s"], r["verdicts"]


def against_harness(args, tag: str) -> None:
    """The phase's verdicts under the `kernelbench` policy beside bench/fidelity's records of the same
    answers: KernelBench's own harness's verdict, and kagent's one-worker `collect` verdict. A harness
    disagreement is explained only by a cause a person wrote down (bench/fidelity/causes.json)."""
    per_policy = json.loads((args.out / tag / "result.json").read_text())["per_policy"]
    records = {}
    for line in args.fidelity.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            records[r["answer"]] = r
    causes = json.loads((REPO / "bench/fidelity/causes.json").read_text())
    same_collect = agree = disagree_explained = no_harness = 0
    unexplained, differs = [], []
    for name, policies in sorted(per_policy.items()):
        mine = policies.get("kernelbench")
        rec = records.get(name)
        if rec is None or mine is None:
            no_harness += 1
            continue
        collect = " ".join(x for x in rec["kernelbench"] if x)
        if mine == collect:
            same_collect += 1
        else:
            differs.append(f"{name}: cluster {mine}, one-worker collect {collect}")
        harness = rec.get("kernelbench_harness")
        if not harness:
            no_harness += 1
            continue
        status, _, reason = mine.partition(" ")
        # compare.py's rule: a cause explains the verdicts its "when" names, not whatever comes later.
        cause, _stale = cause_of(causes, name, "kernelbench", {"verdicts": {"kernelbench": {"status": status, "reason": reason}}})
        if (mine == "correct") == bool(harness.get("correct")):
            agree += 1
        elif cause:
            disagree_explained += 1
        else:
            unexplained.append(f"{name}: cluster {mine}, harness {'correct' if harness.get('correct') else 'not correct'}")
    judged = agree + disagree_explained + len(unexplained)
    print(f"cluster: {tag} against {args.fidelity.name} (policy kernelbench): one-worker collect's verdict in "
          f"{same_collect} of {same_collect + len(differs)}; KernelBench's harness agrees on {agree} of {judged}, "
          f"{disagree_explained} disagreements with a diagnosed cause (bench/fidelity/causes.json), "
          f"{len(unexplained)} without; {no_harness} without a harness record", flush=True)
    for d in differs + unexplained:
        print(f"cluster: {tag}: DIFFERS {d}", flush=True)


def main(argv=None) -> int:
    # A deadline's SIGTERM unwinds through the phases' finally: the nodes (own sessions) and Redis
    # are stopped, not left on the GPU.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kagent", required=True)
    ap.add_argument("--realworld", type=Path, default=default_realworld())
    ap.add_argument("--kernelbench", type=Path, default=None,
                    help="a KernelBench checkout (../shared/kernelbench): each answer's problem from it at its official "
                         "size, instead of the set's own file (KernelBench v0's, smaller)")
    ap.add_argument("--out", type=Path, required=True, help="work folder (emptied first)")
    ap.add_argument("-n", type=int, default=100, help="answers (the n shortest; default 100)")
    ap.add_argument("--gpus", default="0,1", help="the two nodes' GPUs (default 0,1); the one node gets the first")
    ap.add_argument("--concurrency", type=int, default=64,
                    help="requests in flight (default 64: more than two nodes' consumers take at once)")
    ap.add_argument("--seed", type=int, default=0, help="the order's shuffle (default 0)")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--compile-only", action="store_true", help="no GPU: the plumbing alone")
    ap.add_argument("--cpus-per-node", type=int, default=None,
                    help="CPUs each node is pinned to (default: this process's CPUs over the GPUs; 0: no pinning, "
                         "the default with --compile-only)")
    ap.add_argument("--serve-arg", action="append", default=[], help="one more flag for every node")
    ap.add_argument("--repeat", type=int, default=1,
                    help="each answer sent this many times, with request ids of their own (an RL step's rollouts of "
                         "one prompt): a batch whose work is many times its slowest answer's (default 1)")
    ap.add_argument("--phases", default="one,two",
                    help="the phases this call runs (default one,two); a phase left out is read from an earlier "
                         "call's OUT/PHASE/result.json, so that the two fit device calls of their own")
    ap.add_argument("--fidelity", type=Path, default=None,
                    help="bench/fidelity's records of the same answers on the same problem files "
                         "(kagent_verdicts*.jsonl): the one node's verdicts beside KernelBench's harness's")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat: at least 1 (got {args.repeat})")
    run = set(args.phases.split(","))
    if not run or not run <= {"one", "two"}:
        ap.error(f"--phases: one, two or one,two (got {args.phases!r})")
    for tag in run:  # only the phases run now start empty
        shutil.rmtree(args.out / tag, ignore_errors=True)
    shutil.rmtree(args.out / "suite", ignore_errors=True)  # an earlier call's links may name other files
    args.out.mkdir(parents=True, exist_ok=True)
    names = pick_answers(args.realworld, args.n)
    suite, replay = make_suite(args.realworld, names, args.out, args.kernelbench)
    answers = answers_of(replay)
    gpus = args.gpus.split(",")
    if args.cpus_per_node is None:
        args.cpus_per_node = 0 if args.compile_only else len(os.sched_getaffinity(0)) // len(gpus)
    print(f"cluster: {len(names)} answers; nodes pinned to {args.cpus_per_node} CPUs each" if args.cpus_per_node
          else f"cluster: {len(names)} answers; nodes not pinned", flush=True)
    requests = len(answers) * args.repeat
    what = "answers" if args.repeat == 1 else f"requests ({len(answers)} answers x {args.repeat})"
    one_wall, one = phase(args, "one", gpus[:1], suite, answers) if "one" in run else load_phase(args, "one", answers)
    if args.fidelity:
        against_harness(args, "one")
    if "two" not in run:
        print(f"cluster: 1 node: {requests} {what} in {one_wall:.1f} s ({requests / one_wall * 60:.1f}/min); "
              f"two nodes: the next call (--phases two)", flush=True)
        return 0
    two_wall, two = phase(args, "two", gpus[:2], suite, answers)
    equal = sum(1 for k in one if one[k] == two.get(k))
    per_min = lambda wall: requests / wall * 60
    print(f"cluster: 1 node: {requests} {what} in {one_wall:.1f} s ({per_min(one_wall):.1f}/min); "
          f"2 nodes: {two_wall:.1f} s ({per_min(two_wall):.1f}/min); {one_wall / two_wall:.2f}x; "
          f"verdicts equal {equal} of {len(one)}", flush=True)
    for k in sorted(one):
        if one[k] != two.get(k):
            print(f"cluster: DIFFERS {k}: 1 node {one[k]}, 2 nodes {two.get(k)}")
    counts = {}
    for v in one.values():
        counts[v] = counts.get(v, 0) + 1
    print("cluster: verdicts (1 node): " + ", ".join(f"{v} {c}" for v, c in sorted(counts.items(), key=lambda x: -x[1])))
    return 0 if equal == len(one) and (args.compile_only or one_wall / two_wall >= 1.8) else 1


if __name__ == "__main__":
    sys.exit(main())
