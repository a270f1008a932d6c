"""verifiers: `kagent serve` as a MultiTurnEnv (each assistant answer is one step).

    env = KagentMultiTurnEnv(dataset=..., url="http://127.0.0.1:8000")

The dataset's "task" (or info.task_id) names the task; the rubric reads state["kagent_rewards"].
"""

from __future__ import annotations

from typing import Any

import verifiers as vf

from kagent_env.client import KagentClient


class KagentMultiTurnEnv(vf.MultiTurnEnv):
    def __init__(self, url: str | None = None, token: str | None = None, max_turns: int = 4, **kwargs: Any):
        rubric = vf.Rubric(funcs=[self.best_reward], weights=[1.0])
        super().__init__(max_turns=max_turns, rubric=rubric, **kwargs)
        self.client = KagentClient(url, token)

    async def setup_state(self, state, **kwargs):
        info = state.get("info") or {}
        ep = self.client.create_episode(info.get("task_id") or state.get("task"), max_turns=self.max_turns)
        state["kagent_episode"], state["kagent_rewards"], state["kagent_done"] = ep["episode_id"], [], False
        return await super().setup_state(state, **kwargs)

    async def env_response(self, messages, state, **kwargs):
        answer = messages[-1]["content"]
        out = self.client.step(state["kagent_episode"], answer,
                               request_id=f"{state['kagent_episode']}-{len(state['kagent_rewards'])}")
        state["kagent_rewards"].append(out["reward"])
        state["kagent_done"] = out["done"]
        return out["observation"]["messages"]

    @vf.stop
    async def kagent_done(self, state, **kwargs) -> bool:
        return state.get("kagent_done", False)

    @staticmethod
    def best_reward(state, **kwargs) -> float:
        return max(state.get("kagent_rewards", []), default=0.0)
