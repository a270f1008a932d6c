"""The one HTTP client every adapter uses: JSON over `kagent serve`'s API, stdlib only.

429 and 503 are retried after the server's Retry-After; a step carries a request_id, so a
retry after a dropped connection answers the recorded step instead of evaluating twice.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
import uuid
from typing import Any


class KagentError(RuntimeError):
    """An error the server answered: HTTP status, error code and message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class KagentClient:
    def __init__(self, base_url: str | None = None, token: str | None = None,
                 timeout_s: float = 900.0, retries: int = 8):
        # timeout_s covers queueing and the server's own per-task limit (GET /v1/schema: limits).
        self.base_url = (base_url or os.environ.get("KAGENT_SERVE_URL", "http://127.0.0.1:8000")).rstrip("/")
        self.token = token if token is not None else os.environ.get("KAGENT_SERVE_TOKEN")
        self.timeout_s, self.retries = timeout_s, retries

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    return json.loads(resp.read() or b"null")
            except urllib.error.HTTPError as e:
                payload = json.loads(e.read() or b"{}")
                if e.code in (429, 503) and attempt < self.retries:
                    time.sleep(float(e.headers.get("Retry-After", "1")))
                    continue
                err = payload.get("error", {})
                raise KagentError(e.code, err.get("code", "error"), err.get("message", "")) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if attempt >= self.retries:
                    raise
                time.sleep(min(2 ** attempt, 10))
        raise AssertionError("unreachable")

    # Episodes
    def create_episode(self, task_id: str | None = None, **fields: Any) -> dict:
        if task_id is not None:
            fields["task_id"] = task_id
        return self.request("POST", "/v1/episodes", fields)

    def step(self, episode_id: str, text: str, request_id: str | None = None) -> dict:
        body = {"action": {"text": text}, "request_id": request_id or uuid.uuid4().hex}
        return self.request("POST", f"/v1/episodes/{episode_id}/step", body)

    def episode(self, episode_id: str) -> dict:
        return self.request("GET", f"/v1/episodes/{episode_id}")

    def delete_episode(self, episode_id: str) -> dict:
        return self.request("DELETE", f"/v1/episodes/{episode_id}")

    # Stateless
    def evaluate(self, kernel_code: str, **problem: Any) -> dict:
        return self.request("POST", "/v1/evaluate", {"kernel_code": kernel_code, **problem})

    def reward(self, query: list[str], prompts: list[str], labels: list[str]) -> dict:
        return self.request("POST", "/v1/reward", {"query": query, "prompts": prompts, "labels": labels})

    def health(self) -> dict:
        return self.request("GET", "/health")
