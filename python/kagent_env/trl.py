"""TRL: `kagent serve` behind GRPOTrainer's environment_factory.

    GRPOTrainer(..., environment_factory=KagentEnvironment)

TRL calls reset(**row) before each rollout (the row's task_id, or reward_spec.ground_truth,
names the task), offers the public methods as tools (submit_kernel), and calls get_reward()
once the rollout is complete: the best reward of its steps.
"""

from __future__ import annotations

from typing import Any

from kagent_env.client import KagentClient


class KagentEnvironment:
    def __init__(self, url: str | None = None, token: str | None = None, max_turns: int = 4):
        self._client = KagentClient(url, token)
        self._max_turns = max_turns
        self._episode_id: str | None = None
        self._rewards: list[float] = []
        self._done = False

    def reset(self, **row: Any) -> str | None:
        task = row.get("task_id") or (row.get("reward_spec") or {}).get("ground_truth")
        ep = self._client.create_episode(task, max_turns=int(row.get("max_turns") or self._max_turns))
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
        if self._done:
            return "The episode is over: no more submissions."
        out = self._client.step(self._episode_id, answer, request_id=f"{self._episode_id}-{len(self._rewards)}")
        self._rewards.append(float(out["reward"]))
        self._done = bool(out["done"])
        return out["observation"]["messages"][0]["content"]

    def get_reward(self) -> float:
        return max(self._rewards, default=0.0)
