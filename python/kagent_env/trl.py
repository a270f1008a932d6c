"""TRL: `kagent serve` behind GRPOTrainer's environment_factory.

    GRPOTrainer(..., environment_factory=KagentEnvironment)

TRL calls reset(**row) before each rollout (the row's task_id, or reward_spec.ground_truth,
names the task; its "format", if any, the answer format), offers the public methods as tools (submit_kernel), and calls get_reward()
once the rollout is complete: the best reward of its steps. TRL keeps environments in a pool
and resets them for the next rollout; each rollout's episode is deleted on the server when
get_reward() has read it, or at the next reset() if it was not called.

The methods are plain functions, as TRL calls them: AsyncGRPOTrainer runs reset, the tools and
get_reward on its thread pool (trl/experimental/async_grpo), so the rollouts' calls to kagent
overlap; GRPOTrainer calls tools one rollout after another either way.
"""

from __future__ import annotations

from typing import Any

from kagent_env.client import KagentClient


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
        task = row.get("task_id") or (row.get("reward_spec") or {}).get("ground_truth")
        fields = {"max_turns": int(row.get("max_turns") or self._max_turns)}
        if row.get("format"):  # "kernelbench": answers are ModelNew modules, not CUDA files
            fields["format"] = row["format"]
        ep = self._client.create_episode(task, **fields)
        self._episode_id, self._rewards, self._done = ep["episode_id"], [], False
        # The dataset's prompt already holds the task; nothing to add to it.
        return None

    def submit_kernel(self, answer: str) -> str:
        """Compile, check and time a CUDA kernel for the current task.

        Args:
            answer: The answer holding exactly one fenced cuda code block with the kernel.

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
        """The best step's reward; None when no step was scored because none was run (a
        --compile-only server): TRL counts None as no reward, never as 0."""
        self._close_episode()
        scored = [r for r in self._rewards if r is not None]
        if not scored and self._rewards:
            return None
        return max(scored, default=0.0)
