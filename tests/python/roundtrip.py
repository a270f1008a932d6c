"""The training-data round trip of issue 49, on real data: answers of the KernelBench leaderboard
(../shared/realworld/kb_leaderboard) replayed by `kagent collect --format kernelbench`, the
collection turned into rows by `kagent rollout`, and each prompt row handed to every trainer
adapter the way its trainer hands it over, against a real `kagent serve` on loopback; each
adapter is then fed the collection's own answer for that row's task and what it answered is
set beside rollout's row for the same turn.

  test_roundtrip.py                  on the CPU, every evaluation --compile-only (CI), against
                                     one server, then against a cluster: redis-server and two
                                     `kagent serve --queue` nodes (issue 48)
  scripts/serve_roundtrip_gpu.sh     on a GPU, real evaluation: rewards compared
                                     (`python3 tests/python/roundtrip.py --help`; --nodes 2 for
                                     the cluster)

Against a cluster, each prompt row goes to one node's front (row k to node k mod N: a trainer's
rollout workers, each with its URL, as docs/serve.md says; an episode is pinned to the front that
opened it), its evaluations run on whichever node's consumer pulls them, and OpenRLHF's
stateless /v1/reward goes to the next node's front, not the row's.

How each trainer hands a row to its adapter (docs/serve.md, "Trainers"):
  TRL        reset(**row), the submit_kernel tool, get_reward()
  verl       start_interaction(**row["extra_info"]["interaction_kwargs"]), generate_response,
             calculate_score, finalize_interaction
  SkyRL      skyrl_gym.make("kagent", extras=<the row's columns but the prompt>), init(prompt),
             step, close
  verifiers  state {"prompt", "info": row["extra_info"]}, setup_state, env_response, the rubric
  OpenRLHF   POST /v1/reward {query: prompt + answer, prompts, labels: [ground truth], format}

Where a trainer's package is not installed, verl's and verifiers' base classes are stand-ins
with the constructor and hooks the adapter uses (adapter_driver.py); the adapter's own code is
what runs. SkyRL needs skyrl-gym itself (it is left out, and said, without it).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import hashlib
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(HERE))

ADAPTERS = ("trl", "verl", "skyrl", "verifiers", "openrlhf")
NOT_SCORED = ("compiled_not_run", "not_run")  # serve's statuses of an answer that was not run


def default_realworld() -> Path:
    return Path(os.environ.get("KAGENT_REALWORLD_DIR", REPO.parent / "shared/realworld/kb_leaderboard"))


def pick_answers(realworld: Path, n: int) -> list[str]:
    """The `n` shortest leaderboard answers (by bytes, then name): the fastest to compile (CI
    compiles them on 2 cores), level 1 and 2. Among them are problems with the same contents
    under other names (the same KernelBench problem answered by two models), each of which must
    keep its own name through collect, rollout and serve."""
    answers = sorted((p.stat().st_size, p.stem) for p in (realworld / "answers").glob("*.py"))
    return sorted(name for _, name in answers[:n])


def twins(realworld: Path, names: list[str]) -> int:
    """How many of `names` share their problem file's contents with another of them."""
    digest = [hashlib.sha256((realworld / "problems" / f"{name}.py").read_bytes()).hexdigest() for name in names]
    return sum(1 for d in digest if digest.count(d) > 1)


def official_problem(kernelbench: Path, name: str) -> Path:
    """The KernelBench file of a leaderboard answer's problem (l{L}_p{P}_{model} -> level{L}/{P}_*.py):
    the same problem at its official size, where the set's own file is KernelBench v0's, which the
    answer was written for (smaller sizes)."""
    m = re.match(r"l(\d+)_p(\d+)(?:_|$)", name)
    found = sorted((kernelbench / f"level{m[1]}").glob(f"{m[2]}_*.py")) if m else []
    if len(found) != 1:
        raise SystemExit(f"roundtrip: no single KernelBench problem for {name} in {kernelbench}")
    return found[0]


def make_suite(realworld: Path, names: list[str], root: Path, kernelbench: Path | None = None) -> tuple[Path, Path]:
    """A suite folder of links to the chosen problems (the set's own, or with `kernelbench` that
    checkout's at their official sizes) and the replay of their answers."""
    suite = root / "suite"
    suite.mkdir(parents=True, exist_ok=True)
    for name in names:
        link = suite / f"{name}.py"
        if not link.exists():
            problem = official_problem(kernelbench, name) if kernelbench else realworld / "problems" / f"{name}.py"
            link.symlink_to(problem.resolve())
    replay = root / "replay.jsonl"
    wanted = set(names)
    with open(realworld / "replay.jsonl") as src, open(replay, "w") as dst:
        for line in src:
            if json.loads(line)["problem"] in wanted:
                dst.write(line)
    return suite, replay


def run_kagent(binary: str, args: list[str], env: dict, timeout: float, ok=(0,)) -> subprocess.CompletedProcess:
    p = subprocess.run([binary, *args], env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode not in ok:
        raise RuntimeError(f"kagent {' '.join(args)}: exit {p.returncode}\n{p.stderr[-3000:]}")
    return p


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def child_setup(cpus: set[int] | None = None):
    """A preexec_fn for the servers a test or bench starts in sessions of their own: they get
    SIGTERM when the process that started them dies, even by SIGKILL (a deadline's kill reaches
    only that process's group), and run on `cpus` where given."""
    def setup():
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if cpus:
            os.sched_setaffinity(0, cpus)
    return setup


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    """redis-server on a free loopback port, appendonly (what the docs ask of a cluster's Redis),
    its files in `folder`, in a session of its own until stop()."""

    def __init__(self, binary: str, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder),
                                      "--appendonly", "yes", "--save", "", "--logfile", str(folder / "redis.log")],
                                     start_new_session=True, preexec_fn=child_setup())
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("redis-server did not start: " + (folder / "redis.log").read_text()[-2000:])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Server:
    """`kagent serve` on a free loopback port, in its own process group, until stop()."""

    def __init__(self, binary: str, data: Path, suite: Path, env: dict, compile_only: bool, extra=(),
                 cpus: set[int] | None = None):
        """cpus: the CPUs it (and every process it starts) may run on; None: all of them."""
        self.data = data
        self.log = open(data.parent / f"{data.name}.log", "w")
        args = [binary, "serve", "--data", str(data), "--problems", str(suite), "--port", "0", *extra]
        if compile_only:
            args.append("--compile-only")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                     preexec_fn=child_setup(cpus))
        self.url = None

    def wait_ready(self, limit_s: float = 600) -> str:
        end = time.monotonic() + limit_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError("kagent serve exited: " + Path(self.log.name).read_text()[-3000:])
            info = self.data / "server.json"
            if self.url is None and info.exists():
                try:
                    self.url = f"http://127.0.0.1:{json.loads(info.read_text())['port']}"
                except ValueError:
                    pass
            if self.url:
                try:
                    with urllib.request.urlopen(self.url + "/health", timeout=5) as r:
                        if r.status == 200:
                            return self.url
                except Exception:
                    pass
            time.sleep(0.2)
        raise RuntimeError("kagent serve did not become ready: " + Path(self.log.name).read_text()[-3000:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            # Its work in flight may finish (--stop-grace, 30 s); past that the server ends itself
            # (exit 16), and a kill here makes sure nothing of it outlives the caller.
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


class Cluster:
    """redis-server and `nodes` `kagent serve --queue` nodes, each its own process, port and --data
    (root/data-0, ...); the compile cache is env's, shared by the nodes as a shared folder would be.
    node_env(i) adds to node i's environment (its GPU), node_cpus(i) pins it (Server's cpus)."""

    def __init__(self, binary: str, root: Path, suite: Path, env: dict, compile_only: bool, nodes: int,
                 redis_server: str = "redis-server", extra=(), node_env=lambda i: {}, node_cpus=lambda i: None):
        self.redis = Redis(redis_server, root / "redis")
        self.servers: list[Server] = []
        try:
            for i in range(nodes):
                self.servers.append(Server(binary, root / f"data-{i}", suite, {**env, **node_env(i)}, compile_only,
                                           extra=[*extra, "--queue", self.redis.url], cpus=node_cpus(i)))
        except BaseException:
            self.stop()
            raise

    def wait_ready(self) -> list[tuple[str, Path]]:
        """Each node's front and --data folder."""
        return [(s.wait_ready(), s.data) for s in self.servers]

    def jobs_per_node(self) -> list[int]:
        """The jobs each node's consumers ran, from its own /metrics (exact at once; the cluster's
        /health has them from heartbeats a second old), in node order; -1 where none is reported."""
        def jobs(url: str) -> int:
            with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
                m = re.search(r"^kagent_queue_jobs_total (\S+)$", r.read().decode(), re.M)
            return int(float(m[1])) if m else -1
        return [jobs(s.url) for s in self.servers]

    def stop(self) -> None:
        for s in self.servers:
            s.stop()
        self.redis.stop()


@dataclass
class Step:
    """What one adapter did with one row and its answer."""
    adapter: str
    task: str
    episode_id: str | None = None
    start: dict = field(default_factory=dict)   # the episode's episode.json (not for OpenRLHF)
    status: str = ""
    speedup: float | None = None                # over eager, as the server timed it (not for OpenRLHF)
    rounds: dict | None = None                  # the speedup's paired rounds, where --speedup-rounds ran them
    reward: float | None = None                 # the step's reward as the adapter passed it on
    score: float | None = None                  # the episode's score (TRL, verl, verifiers)
    error: str = ""


def prompt_text(row: dict) -> str:
    return "\n".join(m["content"] for m in row["prompt"])


def _read_step(data: Path, step: Step) -> None:
    """The episode's start and its step as the server recorded them (the folder stays after
    DELETE: docs/serve.md)."""
    folder = data / "episodes" / step.episode_id
    step.start = json.loads((folder / "episode.json").read_text())
    recorded = read_jsonl(folder / "steps.jsonl")
    if recorded:
        step.status = recorded[-1]["response"]["metadata"]["status"]
        step.speedup = recorded[-1]["response"]["metadata"].get("speedup_eager")
        step.rounds = recorded[-1]["response"]["metadata"].get("speedup_rounds")


def through_trl(url, token, row, answer, data) -> Step:
    from kagent_env.trl import KagentEnvironment

    s = Step("trl", "")
    env = KagentEnvironment(url=url, token=token)
    env.reset(**row)
    s.episode_id = env._episode_id
    env.submit_kernel(answer)
    s.reward = env._rewards[-1]
    s.score = env.get_reward()
    _read_step(data, s)
    return s


def through_verl(url, token, row, answer, data) -> Step:
    from kagent_env.verl import KagentInteraction

    s = Step("verl", "")
    kwargs = (row.get("extra_info") or {}).get("interaction_kwargs") or {}
    interaction = KagentInteraction({"url": url, "token": token, "max_turns": 1})

    async def run():
        iid = await interaction.start_interaction("roundtrip", **kwargs)
        s.episode_id = interaction._episodes[iid]["episode_id"]
        _, _, s.reward, _ = await interaction.generate_response(iid, [{"role": "assistant", "content": answer}])
        s.score = await interaction.calculate_score(iid)
        await interaction.finalize_interaction(iid)

    asyncio.run(run())
    interaction.client.close()
    _read_step(data, s)
    return s


def through_skyrl(url, token, row, answer, data) -> Step:
    import skyrl_gym

    import kagent_env.skyrl  # noqa: F401  (registers "kagent")

    s = Step("skyrl", "")
    extras = {k: v for k, v in row.items() if k != "prompt"}
    env = skyrl_gym.make("kagent", env_config={"url": url, "token": token}, extras=extras)
    _, info = env.init(row["prompt"])
    s.episode_id = info["episode_id"]
    out = env.step(answer)
    s.reward = out["reward"]
    env.close()
    _read_step(data, s)
    return s


def through_verifiers(url, token, row, answer, data) -> Step:
    from kagent_env.verifiers import KagentMultiTurnEnv

    s = Step("verifiers", "")
    env = KagentMultiTurnEnv(url=url, token=token, max_turns=4)
    state = {"prompt": row["prompt"], "info": row.get("extra_info") or {}}

    async def run():
        await env.setup_state(state)
        s.episode_id = state["kagent_episode"]
        await env.env_response([*row["prompt"], {"role": "assistant", "content": answer}], state)
        s.reward = state["kagent_rewards"][-1]
        s.score = env.best_reward(state)
        await env._delete_episode(state)

    asyncio.run(run())
    env.client.close()
    _read_step(data, s)
    return s


def through_openrlhf(url, token, row, answer, data) -> Step:
    from kagent_env.client import KagentClient
    from kagent_env.rows import format_of, task_of

    s = Step("openrlhf", "")
    text = prompt_text(row)
    # OpenRLHF's remote reward sends query, prompts and labels; the format is the server's --format
    # or, as here, the body's "format" (the same for the whole batch).
    out = KagentClient(url, token).reward([text + answer], [text], [task_of(row)], format=format_of(row))
    s.reward, s.status = out["rewards"][0], out["extra_logs"]["status"][0]
    return s


THROUGH = {"trl": through_trl, "verl": through_verl, "skyrl": through_skyrl, "verifiers": through_verifiers,
           "openrlhf": through_openrlhf}


def usable_adapters() -> tuple[list[str], dict[str, str]]:
    """The adapters that can run here, and why the others cannot. TRL's adapter needs nothing
    of TRL (TRL calls it); SkyRL's is a skyrl-gym class."""
    from adapter_driver import use_verifiers_stand_in, use_verl_stand_in

    use_verl_stand_in()
    use_verifiers_stand_in()
    missing = {}
    try:
        import skyrl_gym  # noqa: F401
    except ImportError:
        missing["skyrl"] = "skyrl_gym is not installed"
    return [a for a in ADAPTERS if a not in missing], missing


def round_trip(fronts: list[tuple[str, Path]], token: str | None, prompts: list[dict], samples: list[dict],
               adapters: list[str], rows_at_once: int = 4) -> list[tuple[dict, dict, Step]]:
    """(prompt row, rollout's sample row, what the adapter did) for every row, turn-0 answer and
    adapter; `rows_at_once` rows in flight (as a trainer's rollouts are; the server's workers
    take them in parallel), each row's adapters one after another. `fronts`: each server's URL
    and --data folder (one server, or a cluster's nodes): row k's episodes go to front k mod N,
    its /v1/reward to the next front."""
    from concurrent.futures import ThreadPoolExecutor

    from kagent_env.rows import format_of, task_of

    def one_row(k, row):
        out = []
        task, fmt = task_of(row), format_of(row)
        # The row's own turns: the same problem collected in both formats is two rows.
        turns = [s for s in samples if s["task"] == task and s["turn"] == 0 and s.get("format", fmt) == fmt]
        for sample in turns:
            for adapter in adapters:
                # Stateless, OpenRLHF's reward may go to any front: another one than the row's episodes.
                url, data = fronts[(k + (adapter == "openrlhf")) % len(fronts)]
                try:
                    step = THROUGH[adapter](url, token, row, sample["response"], data)
                except Exception as e:  # reported per row and adapter, never hidden
                    step = Step(adapter, task, error=f"{type(e).__name__}: {e}")
                step.task = task
                out.append((row, sample, step))
        return out

    with ThreadPoolExecutor(max_workers=max(1, rows_at_once)) as pool:
        return [r for rows in pool.map(one_row, range(len(prompts)), prompts) for r in rows]


def differences(results, compile_only: bool, reward_tolerance) -> list[str]:
    """Every way the adapters' episodes and rewards differ from rollout's rows: one line each."""
    from kagent_env.rows import format_of, task_of

    found = []
    for row, sample, step in results:
        where = f"{step.task} via {step.adapter}"
        if step.error:
            found.append(f"{where}: {step.error}")
            continue
        fmt = format_of(row)
        if fmt is None:
            found.append(f"{where}: the prompt row names no format")
        if step.start:
            if step.start.get("format") != fmt:
                found.append(f"{where}: a {step.start.get('format')} episode for a {fmt} row")
            if step.start.get("task") != task_of(row):
                found.append(f"{where}: the episode's task is {step.start.get('task')}, the row's {task_of(row)}")
            observation = step.start.get("observation", {}).get("messages", [])
            if observation[:1] != row["prompt"][:1]:
                found.append(f"{where}: the episode's system prompt is not the row's")
        if step.status == "format_error":
            found.append(f"{where}: scored as a format error")
        if (step.reward is None) != (step.status in NOT_SCORED):
            found.append(f"{where}: reward {step.reward} for status {step.status}")
        if step.score is not None and isinstance(step.score, float) and math.isnan(step.score):
            step.score = None
        if step.adapter in ("trl", "verl", "verifiers") and step.score != step.reward:
            found.append(f"{where}: the episode's score {step.score} is not its one step's reward {step.reward}")
        if step.reward is not None or not compile_only:
            want = sample.get("reward")
            tol = reward_tolerance(sample, step)
            if step.reward is None or want is None or abs(step.reward - want) > tol:
                found.append(f"{where}: reward {step.reward}, rollout's {want} (tolerance {tol:.3g}; "
                             f"status {step.status}, rollout's {sample.get('status')})")
    return found


def collection(binary: str, realworld: Path, root: Path, n: int, compile_only: bool, env: dict,
               timeout: float, extra_collect=(), kernelbench: Path | None = None) -> tuple[Path, Path, list[dict], list[dict]]:
    """Collect the chosen answers, then rollout: (suite, collection folder, prompt rows, sample rows)."""
    names = pick_answers(realworld, n)
    suite, replay = make_suite(realworld, names, root, kernelbench)
    out = root / "collection"
    args = ["collect", str(suite), "--format", "kernelbench", "-n", "1", "-t", "1", "--llm", f"replay:{replay}",
            "--out", str(out), *extra_collect]
    if compile_only:
        args.append("--compile-only")
    run_kagent(binary, args, env, timeout)
    rolled = root / "rollout"
    # Under --compile-only every reward is 0 (nothing ran), and 20 answers on a GPU may all be
    # rejected under the strict policy: rollout refuses a constant reward unless told it is meant,
    # and the comparison wants the rows either way.
    run_kagent(binary, ["rollout", str(out), "--out", str(rolled), "--quiet", "--allow-constant"], env, 300)
    return suite, out, read_jsonl(rolled / "prompts.jsonl"), read_jsonl(rolled / "samples.jsonl")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="The round trip with real evaluation (GPU): each adapter's reward "
                                             "against rollout's for the same turn.")
    ap.add_argument("--kagent", required=True)
    ap.add_argument("--realworld", type=Path, default=default_realworld())
    ap.add_argument("--out", type=Path, required=True, help="work folder (emptied first)")
    ap.add_argument("-n", type=int, default=20, help="answers (default 20)")
    ap.add_argument("--speedup-tolerance", type=float, default=0.15,
                    help="relative difference of two timings of one kernel taken as the same (default 0.15)")
    ap.add_argument("--compile-only", action="store_true", help="no GPU: the CPU test's checks instead")
    ap.add_argument("--kernelbench", type=Path, default=None,
                    help="a KernelBench checkout (../shared/kernelbench): the answers' problems from it, at their "
                         "official sizes, instead of the set's own files (KernelBench v0's, smaller)")
    ap.add_argument("--rows-at-once", type=int, default=4,
                    help="prompt rows in flight against the server (default 4): other work beside each evaluation")
    ap.add_argument("--speedup-rounds", type=int, default=0,
                    help="kagent's --speedup-rounds for the collection and the server: then a line on how the "
                         "rounds' intervals hold between evaluations (default 0: none)")
    ap.add_argument("--nodes", type=int, default=0,
                    help="against a cluster: redis-server and this many `kagent serve --queue` nodes (default 0: "
                         "one server without a queue)")
    ap.add_argument("--redis-server", default="redis-server", help="the redis-server binary (with --nodes)")
    ap.add_argument("--timing-sample", default=None,
                    help="kagent's --timing-sample for the collection and the server (default: kagent's)")
    ap.add_argument("--kagent-arg", action="append", default=[],
                    help="one more evaluation flag for the collection and the server alike, e.g. "
                         "--kagent-arg=--timing-min-time=0.04 (the reward's repeatability at other timing floors)")
    args = ap.parse_args(argv)
    if args.nodes < 0 or args.nodes == 1:
        ap.error("--nodes: 0 (one server, no queue) or at least 2")
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    env = dict(os.environ, KAGENT_CACHE_DIR=os.environ.get("KAGENT_CACHE_DIR", str(args.out / "cache")))
    t0 = time.monotonic()
    timing = ["--timing-sample", args.timing_sample] if args.timing_sample else []
    if args.speedup_rounds:
        timing += ["--speedup-rounds", str(args.speedup_rounds)]
    timing += args.kagent_arg
    suite, _, prompts, samples = collection(args.kagent, args.realworld, args.out, args.n, args.compile_only, env, 3600,
                                            extra_collect=timing, kernelbench=args.kernelbench)
    print(f"roundtrip: collect and rollout of {len(samples)} answers in {time.monotonic() - t0:.0f} s: "
          f"{len(prompts)} prompt rows", flush=True)
    rollout_info = json.loads((args.out / "rollout" / "rollout.json").read_text())
    preset = rollout_info["reward"]
    adapters, missing = usable_adapters()
    for name, why in missing.items():
        print(f"roundtrip: {name} left out: {why}")

    def tolerance(sample, step):
        # Two timings of one kernel differ by up to --speedup-tolerance of the speedup; the reward
        # moves by the preset's weight times that (kevin: speedup_weight; drkernel: speedup).
        weight = preset.get("speedup_weight", preset.get("speedup", 0.0)) if isinstance(preset, dict) else 0.0
        cap = preset.get("max_speedup", math.inf) if isinstance(preset, dict) else math.inf
        speedup = sample.get("speedup_eager") or 0.0
        return 1e-9 if args.compile_only else 1e-6 + weight * args.speedup_tolerance * min(speedup, cap)

    if args.nodes:
        server = Cluster(args.kagent, args.out, suite, env, args.compile_only, args.nodes, args.redis_server,
                         extra=timing)
    else:
        server = Server(args.kagent, args.out / "data", suite, env, args.compile_only, extra=timing)
    try:
        fronts = server.wait_ready() if args.nodes else [(server.wait_ready(), server.data)]
        t1 = time.monotonic()
        results = round_trip(fronts, None, prompts, samples, adapters, args.rows_at_once)
        print(f"roundtrip: {len(results)} adapter steps in {time.monotonic() - t1:.0f} s"
              + (f" on a cluster of {args.nodes} nodes ({server.redis.url}): jobs per node {server.jobs_per_node()}"
                 if args.nodes else ""), flush=True)
    finally:
        server.stop()
    with open(args.out / "roundtrip.jsonl", "w") as f:
        for row, sample, step in results:
            f.write(json.dumps({"task": step.task, "adapter": step.adapter, "status": step.status,
                                "reward": step.reward, "score": step.score, "error": step.error, "speedup": step.speedup,
                                "format": step.start.get("format"), "rollout_reward": sample.get("reward"),
                                "rollout_status": sample.get("status"),
                                "rollout_speedup": sample.get("speedup_eager"),
                                # What the repeatability reads where rounds ran: which answers spread, and why.
                                "rounds": step.rounds, "rollout_rounds": sample.get("speedup_rounds")}) + "\n")
    found = differences(results, args.compile_only, tolerance)
    for line in found:
        print("roundtrip: DIFFERS " + line)
    differing = sum(1 for r in results if differences([r], args.compile_only, tolerance))
    scored = [(s.reward, sample.get("reward")) for _, sample, s in results
              if s.reward is not None and sample.get("reward") is not None]
    widest = max((abs(a - b) for a, b in scored), default=0.0)
    print(f"roundtrip: {len(results) - differing} of {len(results)} adapter steps as rollout's rows "
          f"({len(scored)} scored, {sum(1 for a, _ in scored if a > 0)} above 0, largest reward difference "
          f"{widest:.3g}; {len(adapters)} adapters, {len({s.task for _, _, s in results})} tasks, "
          f"speedup tolerance {args.speedup_tolerance:g}); {differing} differ", flush=True)
    if not args.compile_only:
        print(repeatability(results), flush=True)
        if args.speedup_rounds:
            print(repeatability(results, from_rounds=True), flush=True)
            print(rounds_repeatability(results), flush=True)
    return 1 if found or not results else 0


def p90_of(ascending: list[float]) -> float:
    """The 90th percentile of an ascending list (the smallest value with 90% at or below it)."""
    return ascending[max(0, math.ceil(0.9 * len(ascending)) - 1)]


def rounds_estimate(rounds: dict | None) -> float | None:
    """What `"speedup_from": "rounds"` reads of an evaluation's rounds: their geometric mean; in
    records written before it was kept, the mean of their ratios, as kagent derives it when it
    reads them (tools/result/speedup_rounds.cpp), and the median only where no ratios are left."""
    if not rounds:
        return None
    ratios = rounds.get("ratios") or []
    if not rounds.get("mean") and ratios and all(r > 0 for r in ratios):
        return math.exp(sum(map(math.log, ratios)) / len(ratios))
    return rounds.get("mean") or rounds.get("median")


def repeatability(results, from_rounds: bool = False) -> str:
    """Each answer's evaluations (the collection's, then every adapter's that reports a speedup):
    the spread, largest speedup over smallest, as issue 46 counts it. from_rounds: the speedup a
    reward with `"speedup_from": "rounds"` reads (the rounds' estimate where they ran)."""
    speedups: dict[str, list[float]] = {}
    for _, sample, step in results:
        seen = speedups.setdefault(step.task, [])
        first = sample.get("speedup_eager")
        if from_rounds:
            first = rounds_estimate(sample.get("speedup_rounds")) or first
        if not seen and first:
            seen.append(first)
        speedup = (rounds_estimate(step.rounds) or step.speedup) if from_rounds else step.speedup
        if speedup:
            seen.append(speedup)
    spreads = sorted(max(v) / min(v) for v in speedups.values() if len(v) > 1 and min(v) > 0)
    if not spreads:
        return "roundtrip: repeatability: no answer timed twice"
    p90 = p90_of(spreads)
    label = "repeatability as `speedup_from: rounds` reads it" if from_rounds else "repeatability"
    return (f"roundtrip: {label} over {len(spreads)} answers: {sum(s <= 1.05 for s in spreads)} within 1.05, "
            f"median spread {spreads[len(spreads) // 2]:.3f}, 90th percentile {p90:.3f}, largest {spreads[-1]:.3f}")


def rounds_repeatability(results) -> str:
    """The paired rounds' intervals against repeated evaluations (the adapters' steps of one answer,
    each its own evaluation): how far the rounds' estimates (rounds_estimate) spread, and how often
    one evaluation's interval held another's estimate: what an interval promises, checked between
    evaluations."""
    per: dict[str, list[dict]] = {}
    for _, _, step in results:
        if step.rounds:
            per.setdefault(step.task, []).append(step.rounds)
    per = {task: r for task, r in per.items() if len(r) > 1}
    if not per:
        return "roundtrip: rounds: no answer with paired rounds in two evaluations (candidates of 1 ms or more have none)"
    spreads = sorted(max(map(rounds_estimate, rs)) / min(map(rounds_estimate, rs)) for rs in per.values())
    held = pairs = 0
    for rs in per.values():
        for i, r in enumerate(rs):
            others = [rounds_estimate(o) for j, o in enumerate(rs) if j != i]
            pairs += len(others)
            held += sum(r["low"] <= m <= r["high"] for m in others)
    unresolved = sum(not r.get("resolved") for rs in per.values() for r in rs)
    p90 = p90_of(spreads)
    return (f"roundtrip: rounds over {len(per)} answers: the rounds' estimates spread {spreads[len(spreads) // 2]:.3f} "
            f"(median), {p90:.3f} (90th percentile); an evaluation's interval held {held} of {pairs} other evaluations' "
            f"estimates; {unresolved} of {sum(len(rs) for rs in per.values())} intervals not within 5%")


if __name__ == "__main__":
    sys.exit(main())
