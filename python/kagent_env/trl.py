"""TRL: `kagent serve` behind GRPOTrainer's environment_factory.

    GRPOTrainer(..., environment_factory=KagentEnvironment)

TRL calls reset(**row) before each rollout (the row names the task and the answer format,
wherever `kagent rollout` put them: kagent_env.rows), offers the public methods as tools
(submit_kernel), and calls get_reward() once the rollout is complete: the best reward of its
steps, None when a step was not scored (TRL counts None as NaN: no reward, never 0). TRL keeps environments in a pool
and resets them for the next rollout; each rollout's episode is deleted on the server when
get_reward() has read it, or at the next reset() if it was not called.

The methods are plain functions, as TRL calls them: AsyncGRPOTrainer runs reset, the tools and
get_reward on its thread pool (trl/experimental/async_grpo), so the rollouts' calls to kagent
overlap; GRPOTrainer calls tools one rollout after another either way.
"""

from __future__ import annotations

from typing import Any

from kagent_env.client import KagentClient
from kagent_env.rows import best_reward, format_of, task_of


class KagentEnvironment:
    def __init__(self, url: str | None = None, token: str | None = None, max_turns: int = 4):
        self._client = KagentClient(url, token)
        self._max_turns = max_turns
        self._episode_id: str | None = None
        self._rewards: list[float | None] = []
        self._done = False

    def _close_episode(self) -> None:
        if self._episode_id is not None:
            episode, self._episode_id = self._episode_id, None
            self._client.delete_episode(episode)

    def reset(self, **row: Any) -> str | None:
        self._close_episode()
        extra = row.get("extra_info") if isinstance(row.get("extra_info"), dict) else {}
        fields = {"max_turns": int(row.get("max_turns") or extra.get("max_turns") or self._max_turns)}
        fmt = format_of(row)
        if fmt:  # "kernelbench": answers are ModelNew modules, not CUDA files
            fields["format"] = fmt
        ep = self._client.create_episode(task_of(row), **fields)
        self._episode_id, self._rewards, self._done = ep["episode_id"], [], False
        # The dataset's prompt already holds the task; nothing to add to it.
        return None

    def submit_kernel(self, answer: str) -> str:
        """Compile, check and time a CUDA kernel for the current task.

        Args:
            answer: The answer holding exactly one fenced code block with the kernel: ```cuda,
                or ```python (a ModelNew module) where the task asks for the KernelBench format.

        Returns:
            What kagent found: compile errors, mismatches, or the timing and speedup.
        """
        if self._done or self._episode_id is None:
            return "The episode is over: no more submissions."
        out = self._client.step(self._episode_id, answer, request_id=f"{self._episode_id}-{len(self._rewards)}")
        self._rewards.append(None if out["reward"] is None else float(out["reward"]))
        self._done = bool(out["done"])
        return out["observation"]["messages"][0]["content"]

    def get_reward(self) -> float | None:
        """The best step's reward; None when a step was not scored because it was not run (a
        --compile-only server), since that step may have been the best: TRL counts None as no
        reward (NaN), never as 0."""
        self._close_episode()
        return best_reward(self._rewards)
