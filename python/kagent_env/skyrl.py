"""SkyRL: `kagent serve` as a skyrl-gym BaseTextEnv.

Register it once (`import kagent_env.skyrl` does) and name it in the dataset's env_class
("kagent", as `kagent rollout` writes). SkyRL hands the row's columns over as `extras`: the task
(reward_spec.ground_truth) and the answer format ("format" in the row, extra_info or
reward_spec: kagent_env.rows) come from there; env_config's "format" is the default for rows
that name none.
"""

from __future__ import annotations

from typing import Any

import skyrl_gym
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from kagent_env.client import KagentClient
from kagent_env.rows import format_of, task_of


class KagentTextEnv(BaseTextEnv):
    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None):
        super().__init__()
        cfg = dict(env_config or {})
        extras = extras or {}
        self.client = KagentClient(cfg.get("url"), cfg.get("token"))
        info = extras.get("extra_info") or {}
        self.task_id = task_of(extras)
        self.format = format_of(extras) or cfg.get("format")
        self.max_turns = int(extras.get("max_turns") or info.get("max_turns") or cfg.get("max_turns") or 4)
        self.reward = cfg.get("reward")
        self.episode_id: str | None = None

    def init(self, prompt):
        fields = {"max_turns": self.max_turns}
        if self.reward:
            fields["reward"] = self.reward
        if self.format:
            fields["format"] = self.format
        ep = self.client.create_episode(self.task_id, **fields)
        self.episode_id = ep["episode_id"]
        # A prompt row from `kagent rollout` already holds the system prompt and the task.
        return (prompt or ep["observation"]["messages"]), {"episode_id": self.episode_id}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        out = self.client.step(self.episode_id, action, request_id=f"{self.episode_id}-{self.turns}")
        return BaseTextEnvStepOutput(
            observations=[] if out["done"] else out["observation"]["messages"],
            reward=out["reward"], done=out["done"], metadata=out["metadata"], postprocessed_action=None)

    def close(self):
        if self.episode_id:
            self.client.delete_episode(self.episode_id)
            self.episode_id = None


if "kagent" not in skyrl_gym.registry:
    skyrl_gym.register(id="kagent", entry_point="kagent_env.skyrl:KagentTextEnv")
