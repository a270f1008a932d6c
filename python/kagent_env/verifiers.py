"""verifiers: `kagent serve` as a MultiTurnEnv (each assistant answer is one step).

    env = KagentMultiTurnEnv(dataset=..., url="http://127.0.0.1:8000")

The row's info (a `kagent rollout` row's extra_info) names the task and the answer format
(kagent_env.rows), else the dataset's "task"; the rubric reads state["kagent_rewards"]: the best
step's reward, NaN when a step was not scored (a --compile-only server), never 0.
verifiers awaits setup_state and env_response on its event loop: the calls to kagent run on the
client's thread pool (KagentAsyncClient), never blocking it. The episode is deleted when its
last step is answered, and by verifiers' cleanup hook where the installed verifiers has one.
"""

from __future__ import annotations

from typing import Any

import verifiers as vf

from kagent_env.client import KagentAsyncClient, KagentClient
from kagent_env.rows import as_number, best_reward, format_of, task_of


class KagentMultiTurnEnv(vf.MultiTurnEnv):
    def __init__(self, url: str | None = None, token: str | None = None, max_turns: int = 4,
                 max_concurrency: int = 256, **kwargs: Any):
        rubric = vf.Rubric(funcs=[self.best_reward], weights=[1.0])
        super().__init__(max_turns=max_turns, rubric=rubric, **kwargs)
        self.client = KagentAsyncClient(KagentClient(url, token), max_concurrency=max_concurrency)

    async def setup_state(self, state, **kwargs):
        info = state.get("info") if isinstance(state.get("info"), dict) else {}
        fields = {"max_turns": self.max_turns}
        fmt = format_of(info)
        if fmt:  # "kernelbench": answers are ModelNew modules, not CUDA files
            fields["format"] = fmt
        ep = await self.client.create_episode(task_of(info) or state.get("task"), **fields)
        state["kagent_episode"], state["kagent_rewards"], state["kagent_done"] = ep["episode_id"], [], False
        return await super().setup_state(state, **kwargs)

    async def env_response(self, messages, state, **kwargs):
        answer = messages[-1]["content"]
        out = await self.client.step(state["kagent_episode"], answer,
                                     request_id=f"{state['kagent_episode']}-{len(state['kagent_rewards'])}")
        state["kagent_rewards"].append(out["reward"])
        state["kagent_done"] = out["done"]
        if out["done"]:
            await self._delete_episode(state)
        return out["observation"]["messages"]

    async def _delete_episode(self, state) -> None:
        episode = state.pop("kagent_episode", None)
        if episode:
            await self.client.delete_episode(episode)

    if hasattr(vf, "cleanup"):
        @vf.cleanup
        async def kagent_cleanup(self, state, **kwargs) -> None:
            await self._delete_episode(state)

    @vf.stop
    async def kagent_done(self, state, **kwargs) -> bool:
        return state.get("kagent_done", False)

    @staticmethod
    def best_reward(state, **kwargs) -> float:
        # A rubric's reward is a float: NaN where a step was not scored (compiled, not run, on a
        # --compile-only server), since it may have been the best; never 0.
        return as_number(best_reward(state.get("kagent_rewards", [])))
