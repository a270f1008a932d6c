"""verl: `kagent serve` as a multi-turn BaseInteraction.

    # interaction_config.yaml
    interaction:
      - name: kagent
        class_name: kagent_env.verl.KagentInteraction
        config: {url: "http://127.0.0.1:8000", token: null, max_turns: 4, max_concurrency: 256}

The prompt row's extra_info.interaction_kwargs (as `kagent rollout` writes them) carry the
interaction's name, the task and the answer format ("cuda" or "kernelbench"); verl passes them to
start_interaction, which reads them as kagent_env.rows does. verl awaits every
interaction on its rollout's event loop, so each call to kagent runs on the client's thread pool
(KagentAsyncClient, `max_concurrency` at once) and the loop goes on with the other interactions
while one is compiled and timed. finalize_interaction deletes the episode.
"""

from __future__ import annotations

import uuid
from typing import Any

from verl.interactions.base import BaseInteraction

from kagent_env.client import KagentAsyncClient, KagentClient
from kagent_env.rows import best_reward, format_of, task_of


class KagentInteraction(BaseInteraction):
    def __init__(self, config: dict):
        super().__init__(config)
        self.client = KagentAsyncClient(KagentClient(config.get("url"), config.get("token")),
                                        max_concurrency=int(config.get("max_concurrency", 256)))
        self.max_turns = int(config.get("max_turns", 4))
        self._episodes: dict[str, dict] = {}

    async def start_interaction(self, instance_id: str | None = None, **interaction_kwargs: Any) -> str:
        instance_id = instance_id or str(uuid.uuid4())
        fields = {"max_turns": self.max_turns}
        fmt = format_of(interaction_kwargs)
        if fmt:  # "kernelbench": answers are ModelNew modules, not CUDA files
            fields["format"] = fmt
        ep = await self.client.create_episode(task_of(interaction_kwargs), **fields)
        self._episodes[instance_id] = {"episode_id": ep["episode_id"], "rewards": []}
        return instance_id

    async def generate_response(self, instance_id: str, messages: list[dict], **kwargs: Any) -> tuple[bool, str, float | None, dict]:
        state = self._episodes[instance_id]
        answer = next(m["content"] for m in reversed(messages) if m["role"] == "assistant")
        out = await self.client.step(state["episode_id"], answer,
                                     request_id=f"{state['episode_id']}-{len(state['rewards'])}")
        state["rewards"].append(out["reward"])
        # reward None: compiled, not run (a --compile-only server); nothing to score.
        return out["done"], out["observation"]["messages"][0]["content"], out["reward"], out["metadata"]

    async def calculate_score(self, instance_id: str, **kwargs: Any) -> float | None:
        # None when a step was not scored (it may have been the best), never 0.
        return best_reward(self._episodes[instance_id]["rewards"])

    async def finalize_interaction(self, instance_id: str, **kwargs: Any) -> None:
        state = self._episodes.pop(instance_id, None)
        if state:
            await self.client.delete_episode(state["episode_id"])
