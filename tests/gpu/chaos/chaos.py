"""The chaos test: one candidate never changes another's verdict (docs/evaluation.md, "Isolation").

On one GPU, `kagent collect` runs a collection that interleaves the project's hack kit
(tests/gpu/hacks), its sandbox kit (tests/gpu/sandbox), answers that capture CUDA graphs, honest
ones (tests/gpu/graphs) and the one that poisons the generator (hygiene/kb_generator_capture.py),
answers that fault (an illegal address, a fault that lands later, an error left pending, a capture
left open) and honest answers: two collect processes at once (the native answers and the
KernelBench-format ones), each with WORKERS workers on GPU 0, so four workers share the GPU. That
is repeated REPS times (the first with whatever the compile cache holds, the others warm). Then
every honest answer, and every answer whose collection verdict was an internal_error, is
evaluated alone in a fresh `kagent eval` process. It passes when:
  - every honest answer's verdict (status and reason) in every repetition equals its verdict alone;
  - there is no problem_error, and no internal_error that does not happen alone too;
  - every sandbox attempt is blocked (no connection reached the listener, no file outside the
    scratch folder or in a real home) and reported as its sandbox_* reason in every repetition.
It prints one summary line ("Chaos: ...") and writes OUT/chaos.json with every verdict.

usage: python3 tests/gpu/chaos/chaos.py --kagent build-gpu/kagent --out OUT [--reps 3] [--workers 2] [--only a,b]

A repetition that runs past --timeout is reported before its collect processes are killed: a
"hang:" line names what holds the GPU's timing lock, and OUT/hang-repN.txt has /proc/locks, every
process with the lock file open (state, wait channel, parent, group) and each holder's kernel
stack; the killed collects' workers are killed too, so the next repetition starts clean.
Exit status 0 when it passes, 1 when it does not, 77 when no GPU is visible (skipped).
"""
import argparse
import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "collect"))
from collection_turns import first_evals, verdict  # noqa: E402

SMALL = ("tests/gpu/problems/", "examples/")  # problems that cost little at their sizes
EVAL_FLAGS = ["--no-baselines", "--no-profile"]

# (name, problem, candidate, format, kind, expected sandbox reason)
EXTRA = [
    ("graph_gelu", "tests/gpu/problems/small_gelu.py", "tests/gpu/graphs/graph_gelu.cu", "cuda", "honest", None),
    ("graph_relu_torch", "tests/gpu/problems/relu_rand.py", "tests/gpu/graphs/graph_relu_torch.cu", "cuda", "honest",
     None),
    ("kb_graph_gelu", "tests/gpu/problems/small_gelu.py", "tests/gpu/graphs/kb_graph_gelu.py", "kernelbench", "honest",
     None),
    ("kb_generator_capture", "tests/gpu/problems/small_gelu.py", "tests/gpu/hygiene/kb_generator_capture.py",
     "kernelbench", "graph", None),
    ("late_fault", "tests/gpu/problems/small_gelu.py", "tests/gpu/hygiene/late_fault.cu", "cuda", "fault", None),
    ("pending_error", "tests/gpu/problems/small_gelu.py", "tests/gpu/hygiene/pending_error.cu", "cuda", "fault", None),
    ("capture_left_open", "tests/gpu/problems/small_gelu.py", "tests/gpu/hygiene/capture_left_open.cu", "cuda", "fault",
     None),
    ("net_connect", "tests/gpu/problems/small_gelu.py", "tests/gpu/sandbox/net_connect.cu", "cuda", "sandbox",
     "sandbox_network"),
    ("kb_net_connect", "tests/gpu/problems/small_gelu.py", "tests/gpu/sandbox/kb_net_connect.py", "kernelbench", "sandbox",
     "sandbox_network"),
    ("write_outside", "tests/gpu/problems/small_gelu.py", "tests/gpu/sandbox/write_outside.cu", "cuda", "sandbox",
     "sandbox_filesystem"),
    ("write_home", "tests/gpu/problems/small_gelu.py", "tests/gpu/sandbox/write_home.cu", "cuda", "sandbox",
     "sandbox_filesystem"),
    ("fork_bomb", "tests/gpu/problems/small_gelu.py", "tests/gpu/sandbox/fork_bomb.cu", "cuda", "sandbox",
     "sandbox_processes"),
]


def answers(honest_limit):
    """Every answer of the chaos collection, interleaved by kind."""
    out = []
    honest = 0
    for e in json.load(open(os.path.join(ROOT, "tests/gpu/kernels/manifest.json"))):
        if not e["problem"].startswith(SMALL):
            continue
        kind = "honest" if e["expect"] == "correct" else "fault" if e["name"] in ("oob_write", "host_segfault") else None
        if kind == "honest" and e.get("format", "cuda") == "cuda":
            honest += 1
            if honest > honest_limit:  # each is evaluated alone too: a few are enough
                continue
        if kind:
            out.append((e["name"], e["problem"], e["candidate"], e.get("format", "cuda"), kind, None))
    for e in json.load(open(os.path.join(ROOT, "tests/gpu/hacks/manifest.json"))):
        if e["problem"].startswith(SMALL):
            out.append(("hack_" + e["name"], e["problem"], e["candidate"], e.get("format", "cuda"), "hack", None))
    out += EXTRA
    kinds = {}
    for a in out:
        kinds.setdefault(a[4], []).append(a)
    mixed = []
    while any(kinds.values()):  # one of each kind in turn: no two alike side by side
        for k in sorted(kinds):
            if kinds[k]:
                mixed.append(kinds[k].pop(0))
    return mixed


def fence(fmt, code):
    return ("```cuda\n" if fmt == "cuda" else "```python\n") + code.rstrip() + "\n```\n"


def write_collection_inputs(out, items, fmt):
    """A suite (one copy of the problem file per answer, named after it) and a replay file."""
    suite_dir = os.path.join(out, f"suite-{fmt}")
    os.makedirs(suite_dir, exist_ok=True)
    suite, replay = [], []
    for name, problem, candidate, f, _, _ in items:
        if f != fmt:
            continue
        path = os.path.join(suite_dir, name + ".py")
        shutil.copyfile(os.path.join(ROOT, problem), path)
        suite.append(path)
        code = open(os.path.join(ROOT, candidate)).read()
        replay.append(json.dumps({"problem": name, "sample": 0, "turn": 0, "text": "The answer.\n\n" + fence(fmt, code),
                                  "usage": {"prompt_tokens": 1000, "completion_tokens": len(code) // 4}}))
    with open(os.path.join(out, f"suite-{fmt}.txt"), "w") as f:
        f.write("\n".join(suite) + "\n")
    with open(os.path.join(out, f"replay-{fmt}.jsonl"), "w") as f:
        f.write("\n".join(replay) + "\n")
    return os.path.join(out, f"suite-{fmt}.txt"), os.path.join(out, f"replay-{fmt}.jsonl")


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections the sandbox let through."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.count = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.count += 1
            conn.close()


def run_eval_alone(kagent, problem, candidate, fmt, env, timeout):
    cmd = [kagent, "eval", os.path.join(ROOT, problem), os.path.join(ROOT, candidate), "--format", fmt, "--json"]
    try:
        run = subprocess.run(cmd + EVAL_FLAGS, capture_output=True, text=True, timeout=timeout, env=env)
        return json.loads(run.stdout[run.stdout.index("{"):])
    except (subprocess.TimeoutExpired, ValueError) as e:
        return {"status": "no_answer", "reason": "", "message": str(e)[:200]}


def leaks(forbidden, listener):
    found = []
    if listener.count:
        found.append(f"{listener.count} connection(s) reached the listener")
    if os.path.exists(forbidden):
        found.append("the file outside the scratch folder was written")
    homes = {"/root", pwd.getpwuid(os.getuid()).pw_dir}
    for home in homes:
        for probe in ("kagent-sandbox-home-probe", "kagent-sandbox-home-probe-dir"):
            if os.path.exists(os.path.join(home, probe)):
                found.append(f"{os.path.join(home, probe)} was written")
    return found


def hang_report(kagent, out_path):
    """What holds the GPU's timing lock when a repetition runs past its limit, before its collect
    processes are killed (worker/client/lock_holders.h reads the same lists): every lock on a
    *.timing file in the ledger's folder, every process that has one open (its state, what it
    waits in, its parent and group), the kernel stack of each holder, every worker's threads
    (state, wait channel; the kernel stack of those in D), gdb's native stacks of the holders
    where gdb is installed, and the workers' logs with the Python stacks each one writes on
    SIGUSR1. Returns one line."""
    folder = os.environ.get("KAGENT_GPU_ADMISSION_DIR") or "/tmp/kagent-gpu-admission"
    inodes = {}
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        if name.endswith(".timing"):
            inodes[str(os.stat(os.path.join(folder, name)).st_ino)] = name
    locks = [l.rstrip() for l in open("/proc/locks") if l.split() and l.split()[-3].rsplit(":", 1)[-1] in inodes]

    def read(path):
        try:
            return open(path).read().strip()
        except OSError:
            return ""

    def uid_of(pid):
        for line in read(f"/proc/{pid}/status").splitlines():
            if line.startswith("Uid:"):
                return line.split()[1]
        return "?"

    openers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if str(os.stat(f"/proc/{pid}/fd/{fd}").st_ino) in inodes:
                    stat = read(f"/proc/{pid}/stat").rsplit(")", 1)[-1].split()
                    info = " ".join(l for l in read(f"/proc/{pid}/fdinfo/{fd}").splitlines() if l.startswith("lock"))
                    openers.append(f"pid {pid} ({read(f'/proc/{pid}/comm')}) state {stat[0]} ppid {stat[1]} pgid {stat[2]}"
                                   f" uid {uid_of(pid)} in {read(f'/proc/{pid}/wchan')} {info}")
                    break
            except OSError:
                continue
    holders = sorted({l.split()[-4] for l in locks if "->" not in l})
    stacks = {pid: read(f"/proc/{pid}/stack") for pid in holders}
    workers = worker_pids(kagent)
    for pid in workers:  # each one's Python stacks into its log (kagent_worker/registry.py)
        # Only those that catch it (SigCgt): the sandbox's monitor (the same binary, the worker's
        # parent) has no handler, and SIGUSR1 would end it, and with it the worker.
        caught = [l.split()[1] for l in read(f"/proc/{pid}/status").splitlines() if l.startswith("SigCgt:")]
        if not caught or not int(caught[0], 16) & (1 << (signal.SIGUSR1 - 1)):
            continue
        try:
            os.kill(pid, signal.SIGUSR1)
        except OSError:
            pass
    time.sleep(1.0)
    with open(out_path, "w") as f:
        f.write("locks:\n" + "\n".join(locks) + "\n\nprocesses with a timing lock open:\n" + "\n".join(openers) + "\n")
        for pid, stack in stacks.items():
            f.write(f"\nholder {pid} ({read(f'/proc/{pid}/comm') or 'exited'}):\n{stack}\n")
        # Every worker's threads: a CUDA call that never returns shows as a thread in the driver.
        for pid in workers:
            f.write(f"\nworker {pid}: threads (state, wait channel):\n")
            for tid in sorted(os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else [], key=int):
                stat = read(f"/proc/{pid}/task/{tid}/stat").rsplit(")", 1)[-1].split()
                state = stat[0] if stat else "?"
                f.write(f"  {tid} {read(f'/proc/{pid}/task/{tid}/comm')} {state} {read(f'/proc/{pid}/task/{tid}/wchan')}\n")
                if state == "D":
                    f.write("    " + read(f"/proc/{pid}/task/{tid}/stack").replace("\n", "\n    ") + "\n")
            if shutil.which("gdb") and str(pid) in holders:
                try:
                    bt = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 25"],
                                        capture_output=True, text=True, timeout=60).stdout
                    f.write("  native stacks (gdb):\n" + bt[-20000:] + "\n")
                except (OSError, subprocess.TimeoutExpired) as e:
                    f.write(f"  gdb: {e}\n")
        # The workers' logs, with the Python stacks SIGUSR1 just added at their ends.
        for log in sorted(glob.glob(os.path.join(tempfile.gettempdir(), "kagent-worker-*.log"))):
            lines = read(log).splitlines()
            f.write(f"\n{log} (last 150 of {len(lines)} lines):\n" + "\n".join(lines[-150:]) + "\n")
        ps = subprocess.run(["ps", "-eo", "pid,ppid,pgid,uid,stat,wchan:32,etime,cmd"], capture_output=True, text=True)
        f.write("\nps:\n" + "\n".join(l for l in ps.stdout.splitlines() if "kagent" in l or "PID" in l) + "\n")
    described = [f"{pid} ({read(f'/proc/{pid}/comm') or 'exited'}, {read(f'/proc/{pid}/wchan') or '-'})" for pid in holders]
    return (f"hang: {len(locks)} lock(s) on the timing lock ({sum('->' in l for l in locks)} waiting), held by "
            f"{', '.join(described) or 'nobody'}; {len(openers)} process(es) have it open; details in {out_path}")


def worker_pids(kagent):
    """The running processes of the kagent-worker binary beside `kagent` (forks of it included)."""
    worker = os.path.realpath(os.path.join(os.path.dirname(kagent), "kagent-worker"))
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == worker:
                pids.append(int(pid))
        except OSError:
            continue
    return pids


def kill_workers(kagent):
    """The workers of killed collect processes (process groups of their own) and what they forked:
    left behind, they would wait for the lock and hold the next repetition back."""
    for pid in worker_pids(kagent):
        try:
            os.kill(pid, 9)
        except OSError:
            continue


def gpu_visible():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kagent", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2, help="workers on GPU 0 in each of the two collect processes")
    ap.add_argument("--timeout", type=int, default=150, help="seconds for one repetition")
    ap.add_argument("--honest", type=int, default=5,
                    help="native honest answers from tests/gpu/kernels (its KernelBench-format one and the CUDA-graph "
                         "ones come on top)")
    ap.add_argument("--only", default="",
                    help="comma-separated answer names: run just these (to find which answer a hang follows)")
    args = ap.parse_args()
    if not gpu_visible():
        print("SKIPPED: no GPU visible (nvidia-smi -L failed)")
        return 77
    kagent = os.path.abspath(args.kagent)
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    items = answers(args.honest)
    if args.only:
        wanted = set(args.only.split(","))
        items = [a for a in items if a[0] in wanted]
    inputs = {fmt: write_collection_inputs(out, items, fmt) for fmt in ("cuda", "kernelbench")
              if any(a[3] == fmt for a in items)}
    listener = Listener()
    forbidden_dir = os.path.join(out, "forbidden")
    os.makedirs(forbidden_dir)
    forbidden = os.path.join(forbidden_dir, "forged-baseline.json")
    env = dict(os.environ, KAGENT_SANDBOX_TEST_PORT=str(listener.port), KAGENT_SANDBOX_TEST_FORBIDDEN=forbidden)
    started = time.monotonic()

    reps = []
    for rep in range(1, args.reps + 1):
        procs = {}
        for fmt, (suite, replay) in inputs.items():
            folder = os.path.join(out, f"rep{rep}-{fmt}")
            cmd = [kagent, "collect", suite, "-n", "1", "-t", "1", "--format", fmt, "--llm", "replay:" + replay,
                   "--out", folder, "--gpus", "0", "--workers-per-gpu", str(args.workers), "--order", "interleaved",
                   "--concurrency", "8"] + EVAL_FLAGS
            log = open(os.path.join(out, f"rep{rep}-{fmt}.log"), "w")
            procs[fmt] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), folder, log)
        got = {}
        deadline = time.monotonic() + args.timeout
        hung = False
        for fmt, (proc, folder, log) in procs.items():
            try:
                proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                if not hung:
                    print(hang_report(kagent, os.path.join(out, f"hang-rep{rep}.txt")), flush=True)
                hung = True
                proc.kill()
                proc.wait()
            log.close()
            got.update(first_evals(folder))
        if hung:
            kill_workers(kagent)
        text = "".join(open(os.path.join(out, f"rep{rep}-{fmt}.log")).read() for fmt in inputs)
        charges = sum(len(open(os.path.join(out, f"rep{rep}-{fmt}", "charges.jsonl")).readlines())
                      for fmt in inputs if os.path.exists(os.path.join(out, f"rep{rep}-{fmt}", "charges.jsonl")))
        reps.append({"verdicts": got, "waits": text.count("waiting for GPU memory"), "charges": charges})
        print(f"repetition {rep}: {len(got)} of {len(items)} answers recorded in {time.monotonic() - started:.0f} s",
              flush=True)

    # Alone, in a fresh process each: the honest answers, and whatever came out internal_error.
    alone = {}
    for name, problem, candidate, fmt, kind, _ in items:
        suspicious = any(verdict(r["verdicts"].get(name))[0] == "internal_error" for r in reps)
        if kind == "honest" or suspicious:
            alone[name] = run_eval_alone(kagent, problem, candidate, fmt, env, args.timeout)

    failures, honest_same, honest_total, sandbox_ok, sandbox_total = [], 0, 0, 0, 0
    problem_errors = internal_errors = internal_not_alone = retries = 0
    timed = beside_worker = 0  # timings, and those that saw a kagent-worker on the GPU outside the lock
    for name, problem, candidate, fmt, kind, expect in items:
        for k, r in enumerate(reps, 1):
            ev = r["verdicts"].get(name)
            status, reason = verdict(ev)
            retries += bool((ev or {}).get("isolation", {}).get("retry"))
            contention = ((ev or {}).get("timing") or {}).get("contention")
            if contention:
                timed += 1
                beside_worker += any("kagent-worker" in o for o in contention.get("others", []))
            if ev is None:
                failures.append(f"rep {k} {name}: no verdict recorded")
                continue
            if status == "problem_error":
                problem_errors += 1
                failures.append(f"rep {k} {name}: problem_error {reason}: {ev.get('message', '')[:160]}")
            if status == "internal_error":
                internal_errors += 1
                if verdict(alone.get(name))[0] != "internal_error":
                    internal_not_alone += 1
                    failures.append(f"rep {k} {name}: internal_error {reason} (alone: {verdict(alone.get(name))}): "
                                    f"{ev.get('message', '')[:160]}")
            if kind == "honest":
                honest_total += 1
                if (status, reason) == verdict(alone.get(name)):
                    honest_same += 1
                else:
                    failures.append(f"rep {k} {name}: {status} {reason} in the collection, "
                                    f"{verdict(alone.get(name))} alone: {ev.get('message', '')[:160]}")
            if kind == "sandbox":
                sandbox_total += 1
                if reason == expect:
                    sandbox_ok += 1
                else:
                    failures.append(f"rep {k} {name}: expected {expect}, got {status} {reason}: {ev.get('message', '')[:160]}")
    leaked = leaks(forbidden, listener)
    failures += [f"sandbox: {x}" for x in leaked]
    waits = sum(r["waits"] for r in reps)
    charges = sum(r["charges"] for r in reps)
    ok = not failures
    summary = (f"Chaos: {args.reps} repetitions x {len(items)} answers (2 collect processes x {args.workers} workers on "
               f"one GPU): honest {honest_same}/{honest_total} as alone, sandbox attempts reported {sandbox_ok}/"
               f"{sandbox_total}{', LEAKED' if leaked else ''}, problem_error {problem_errors}, internal_error "
               f"{internal_errors} ({internal_not_alone} not so alone), {retries} retried on a fresh worker, "
               f"{charges} charge(s), {waits} wait(s) for GPU memory, {beside_worker} of {timed} timing(s) beside a "
               f"worker outside the lock, {time.monotonic() - started:.0f} s -> "
               f"{'OK' if ok else 'FAILED'}")
    json.dump({"summary": summary, "failures": failures, "answers": [list(a) for a in items],
               "repetitions": reps, "alone": alone}, open(os.path.join(out, "chaos.json"), "w"), indent=1)
    for name, problem, candidate, fmt, kind, _ in items:
        row = " | ".join(" ".join(verdict(r["verdicts"].get(name))).strip() for r in reps)
        print(f"{kind:<7} {name:<28} {row}" + (f"  (alone: {' '.join(verdict(alone[name])).strip()})" if name in alone else ""))
    for f in failures[:30]:
        print("FAIL", f)
    print(summary)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
