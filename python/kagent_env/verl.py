"""verl: `kagent serve` as a multi-turn BaseInteraction.

    # interaction_config.yaml
    interaction:
      - name: kagent
        class_name: kagent_env.verl.KagentInteraction
        config: {url: "http://127.0.0.1:8000", token: null, max_turns: 4}

The prompt row's interaction_kwargs carry {"name": "kagent", "task_id": ...}.
"""

from __future__ import annotations

from typing import Any

from verl.interactions.base import BaseInteraction

from kagent_env.client import KagentClient


class KagentInteraction(BaseInteraction):
    def __init__(self, config: dict):
        super().__init__(config)
        self.client = KagentClient(config.get("url"), config.get("token"))
        self.max_turns = int(config.get("max_turns", 4))
        self._episodes: dict[str, dict] = {}

    async def start_interaction(self, instance_id: str | None = None, task_id: str | None = None, **kwargs: Any) -> str:
        ep = self.client.create_episode(task_id, max_turns=self.max_turns)
        self._episodes[instance_id] = {"episode_id": ep["episode_id"], "rewards": []}
        return instance_id

    async def generate_response(self, instance_id: str, messages: list[dict], **kwargs: Any) -> tuple[bool, str, float, dict]:
        state = self._episodes[instance_id]
        answer = next(m["content"] for m in reversed(messages) if m["role"] == "assistant")
        out = self.client.step(state["episode_id"], answer, request_id=f"{state['episode_id']}-{len(state['rewards'])}")
        state["rewards"].append(out["reward"])
        return out["done"], out["observation"]["messages"][0]["content"], out["reward"], out["metadata"]

    async def calculate_score(self, instance_id: str, **kwargs: Any) -> float:
        return max(self._episodes[instance_id]["rewards"], default=0.0)

    async def finalize_interaction(self, instance_id: str, **kwargs: Any) -> None:
        state = self._episodes.pop(instance_id, None)
        if state:
            self.client.delete_episode(state["episode_id"])
