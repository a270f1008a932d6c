"""Episodes driven through the trainer adapters the way their trainers call them, timed: for
the adapter tests (compile-only on loopback) and scripts/serve_adapters_gpu.sh (real evaluation).

  verl: every interaction a coroutine on one event loop, as verl's rollout awaits them
        (start_interaction, generate_response per turn, calculate_score, finalize_interaction,
        all awaited; asyncio.gather over the episodes).
  TRL:  one KagentEnvironment per rollout, reset / the submit_kernel tool / get_reward run on a
        thread pool through loop.run_in_executor, as TRL's AsyncGRPOTrainer does
        (trl/experimental/async_grpo/async_rollout_worker.py: `_tool_pool`).

Where the trainer's package is not installed, verl's BaseInteraction is replaced by a stand-in
with its constructor (use_verl_stand_in); the adapter's own code is what runs.

`answers`: the answers of every episode, or task -> its episode's answers. `model_s`: the
model's time to write each answer, slept on the event loop before each step (the trainer's
generation, which a replay does not have; 0: none). `fmt`: the episodes' answer format.
"""

from __future__ import annotations

import asyncio
import sys
import time
import types
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field


def use_verl_stand_in() -> bool:
    """Installs verl.interactions.base with verl's BaseInteraction constructor where verl is not
    installed; True when it did."""
    try:
        import verl.interactions.base  # noqa: F401
        return False
    except ImportError:
        pass

    class BaseInteraction:  # verl/interactions/base.py: the constructor the adapter calls
        def __init__(self, config: dict):
            self.config = config
            self.name = config.get("name", "interaction_agent")

    for name in ("verl", "verl.interactions", "verl.interactions.base"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["verl.interactions.base"].BaseInteraction = BaseInteraction
    return True


def use_verifiers_stand_in() -> bool:
    """Installs a `verifiers` module with what the adapter takes from verifiers 0.3 (MultiTurnEnv's
    constructor and setup_state, Rubric, the stop decorator) where no verifiers with MultiTurnEnv
    is installed; True when it did. Call it at run time, not on import: test_verifiers.py must
    see the real package, or none."""
    try:
        import verifiers
        if hasattr(verifiers, "MultiTurnEnv"):
            return False
    except ImportError:
        pass

    class Rubric:
        def __init__(self, funcs=None, weights=None, **kwargs):
            self.funcs, self.weights = list(funcs or []), list(weights or [])

    class MultiTurnEnv:
        def __init__(self, max_turns: int = 10, rubric=None, **kwargs):
            self.max_turns, self.rubric = max_turns, rubric

        async def setup_state(self, state, **kwargs):
            return state

    module = types.ModuleType("verifiers")
    module.Rubric, module.MultiTurnEnv, module.stop = Rubric, MultiTurnEnv, lambda fn: fn
    sys.modules["verifiers"] = module
    sys.modules.pop("kagent_env.verifiers", None)  # built on whatever verifiers it found before
    return True


@dataclass
class Episode:
    start: float = 0.0
    end: float = 0.0
    steps: list = field(default_factory=list)      # (sent, answered) per step
    rewards: list = field(default_factory=list)
    statuses: list = field(default_factory=list)
    score: float | None = None


@dataclass
class Run:
    episodes: list
    wall_s: float

    def all_in_flight_at_once(self) -> bool:
        """Some moment when every episode had started and none had ended."""
        return max(e.start for e in self.episodes) < min(e.end for e in self.episodes)

    def steps_overlap(self, turn: int = 0) -> bool:
        """Every episode's step `turn` was sent before any of them was answered."""
        return max(e.steps[turn][0] for e in self.episodes) < min(e.steps[turn][1] for e in self.episodes)


def _answers_of(answers, task: str) -> list[str]:
    return answers[task] if isinstance(answers, dict) else answers


def run_verl(url: str, token: str | None, tasks: list[str], answers, n: int, model_s: float = 0.0,
             fmt: str | None = None) -> Run:
    from kagent_env.verl import KagentInteraction

    turns = max(len(_answers_of(answers, t)) for t in tasks)
    interaction = KagentInteraction({"url": url, "token": token, "max_turns": turns, "max_concurrency": max(n, 1)})

    async def episode(i: int) -> Episode:
        e = Episode(start=time.monotonic())
        task = tasks[i % len(tasks)]
        iid = await interaction.start_interaction(f"rollout-{i}", task_id=task, format=fmt)
        messages = []
        for a in _answers_of(answers, task):
            await asyncio.sleep(model_s)
            messages.append({"role": "assistant", "content": a})
            sent = time.monotonic()
            done, text, reward, meta = await interaction.generate_response(iid, messages)
            e.steps.append((sent, time.monotonic()))
            e.rewards.append(reward)
            e.statuses.append(meta["status"])
            messages.append({"role": "user", "content": text})
            if done:
                break
        e.score = await interaction.calculate_score(iid)
        await interaction.finalize_interaction(iid)
        e.end = time.monotonic()
        return e

    async def all_episodes():
        return await asyncio.gather(*(episode(i) for i in range(n)))

    t0 = time.monotonic()
    episodes = asyncio.run(all_episodes())
    return Run(list(episodes), time.monotonic() - t0)


def run_trl(url: str, token: str | None, tasks: list[str], answers, n: int, model_s: float = 0.0,
            fmt: str | None = None) -> Run:
    from kagent_env.trl import KagentEnvironment

    turns = max(len(_answers_of(answers, t)) for t in tasks)
    envs = [KagentEnvironment(url=url, token=token, max_turns=turns) for _ in range(n)]
    pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="trl-tool")

    async def rollout(i: int) -> Episode:
        loop = asyncio.get_running_loop()
        env = envs[i]
        task = tasks[i % len(tasks)]
        row = {"task_id": task, **({"format": fmt} if fmt else {})}
        e = Episode(start=time.monotonic())
        await loop.run_in_executor(pool, lambda: env.reset(**row))
        for a in _answers_of(answers, task):
            await asyncio.sleep(model_s)
            sent = time.monotonic()
            feedback = await loop.run_in_executor(pool, env.submit_kernel, a)
            e.steps.append((sent, time.monotonic()))
            e.rewards.append(env._rewards[-1] if env._rewards else None)
            e.statuses.append(feedback.splitlines()[0] if feedback else "")
        e.score = await loop.run_in_executor(pool, env.get_reward)
        e.end = time.monotonic()
        return e

    async def all_rollouts():
        return await asyncio.gather(*(rollout(i) for i in range(n)))

    t0 = time.monotonic()
    try:
        episodes = asyncio.run(all_rollouts())
    finally:
        pool.shutdown(wait=True)
    return Run(list(episodes), time.monotonic() - t0)
