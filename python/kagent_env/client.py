"""The one HTTP client every adapter uses: JSON over `kagent serve`'s API, stdlib only.

Retry policy (what a trainer waits for before it sees an error):
  * Cannot connect (refused, unreachable, no such host, connect timeout): `connect_retries`
    more tries, `connect_backoff_s` apart (1 then 2 s by default), then KagentUnavailable;
    with the defaults a server that is not there is reported within about 3 s, never minutes.
    Each try waits at most `connect_timeout_s` (5 s) for the connection.
  * 429 queue_full and 503 starting: retried after the server's Retry-After, up to `retries`
    times. Any other error status (503 no_gpu or workers_failed included) is raised at once.
  * The connection dropped after the request was sent: retried up to `retries` times (1, 2, 4,
    ... 10 s apart) where that is safe: GET and DELETE, a step (its request_id makes the retry
    answer the recorded step instead of evaluating twice), an episode create (the client names
    the episode, so a retry that finds it answers it), an evaluation (stateless).
  * No answer within `timeout_s` (900 s: the server's own task limit, 180 s by default, plus
    queueing and compiling): KagentUnavailable, not retried.

KagentAsyncClient runs the same calls on a thread pool, for trainers that await their
environments on an event loop (verl, verifiers): the loop never blocks on HTTP.
"""

from __future__ import annotations

import asyncio
import functools
import http.client
import json
import os
import socket
import time
import urllib.parse
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any


class KagentError(RuntimeError):
    """An error the server answered: HTTP status, error code and message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class KagentUnavailable(ConnectionError):
    """The server could not be reached (or did not answer in time) after the retry policy."""


class _NoConnection(Exception):
    """The connection was never made: nothing was sent."""


class _Dropped(Exception):
    """The connection broke after the request went out."""


class _NoAnswer(Exception):
    """No answer within the read timeout."""


class KagentClient:
    def __init__(self, base_url: str | None = None, token: str | None = None, timeout_s: float = 900.0,
                 retries: int = 8, connect_timeout_s: float = 5.0, connect_retries: int = 2,
                 connect_backoff_s: float = 1.0):
        self.base_url = (base_url or os.environ.get("KAGENT_SERVE_URL", "http://127.0.0.1:8000")).rstrip("/")
        url = urllib.parse.urlsplit(self.base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"kagent serve URL must be http(s)://HOST[:PORT], not {self.base_url!r}")
        self._https = url.scheme == "https"
        self._host, self._port = url.hostname, url.port or (443 if self._https else 80)
        self._prefix = url.path.rstrip("/")
        self.token = token if token is not None else os.environ.get("KAGENT_SERVE_TOKEN")
        self.timeout_s, self.retries = timeout_s, retries
        self.connect_timeout_s, self.connect_retries, self.connect_backoff_s = (
            connect_timeout_s, connect_retries, connect_backoff_s)

    def _once(self, method: str, path: str, data: bytes | None, headers: dict) -> tuple[int, dict, bytes]:
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=self.connect_timeout_s)
        try:
            try:
                conn.connect()
            except OSError as e:
                raise _NoConnection(e.strerror or str(e) or type(e).__name__) from e
            conn.sock.settimeout(self.timeout_s)
            try:
                conn.request(method, self._prefix + path, body=data, headers=headers)
                resp = conn.getresponse()
                return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
            except socket.timeout as e:
                raise _NoAnswer() from e
            except (http.client.HTTPException, OSError) as e:
                raise _Dropped(str(e) or type(e).__name__) from e
        finally:
            conn.close()

    def request(self, method: str, path: str, body: Any = None, safe_to_repeat: bool | None = None,
                accept: tuple = ()) -> Any:
        """One call under the retry policy above; the answer's JSON (also for a status in `accept`),
        or KagentError/KagentUnavailable."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Connection": "close"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        repeatable = method in ("GET", "DELETE") if safe_to_repeat is None else safe_to_repeat
        connect_failures = drops = busy = 0
        started = time.monotonic()
        while True:
            try:
                status, resp_headers, payload = self._once(method, path, data, headers)
            except _NoAnswer:
                raise KagentUnavailable(f"{method} {self.base_url}{path}: no answer within {self.timeout_s:g} s") from None
            except _Dropped as e:
                if not repeatable or drops >= self.retries:
                    raise KagentUnavailable(f"{method} {self.base_url}{path}: the connection dropped ({e})") from None
                time.sleep(min(2 ** drops, 10))
                drops += 1
                continue
            except _NoConnection as e:
                if connect_failures >= self.connect_retries:
                    raise KagentUnavailable(
                        f"cannot connect to kagent serve at {self.base_url}: {e} "
                        f"({connect_failures + 1} tries in {time.monotonic() - started:.1f} s)") from None
                time.sleep(self.connect_backoff_s * 2 ** connect_failures)
                connect_failures += 1
                continue
            try:
                answer = json.loads(payload or b"null")
            except ValueError:
                answer = None
            if status < 400 or status in accept:
                return answer
            err = answer.get("error") if isinstance(answer, dict) else None
            err = err if isinstance(err, dict) else {}
            code = err.get("code", "error")
            if (status == 429 or (status == 503 and code == "starting")) and busy < self.retries:
                time.sleep(float(resp_headers.get("retry-after", "1")))
                busy += 1
                continue
            if status == 409 and code == "episode_exists" and drops > 0 and path == "/v1/episodes":
                # Our own create, retried after a dropped answer: the episode is there.
                got = self.episode(body["episode_id"])
                return {"episode_id": got["episode_id"], "observation": got["start"]["observation"], "done": got["done"]}
            raise KagentError(status, code, err.get("message", payload.decode(errors="replace")[:200]))

    # Episodes
    def create_episode(self, task_id: str | None = None, **fields: Any) -> dict:
        if task_id is not None:
            fields["task_id"] = task_id
        fields.setdefault("episode_id", "ep-" + uuid.uuid4().hex)
        return self.request("POST", "/v1/episodes", fields, safe_to_repeat=True)

    def step(self, episode_id: str, text: str, request_id: str | None = None) -> dict:
        body = {"action": {"text": text}, "request_id": request_id or uuid.uuid4().hex}
        return self.request("POST", f"/v1/episodes/{episode_id}/step", body, safe_to_repeat=True)

    def episode(self, episode_id: str) -> dict:
        return self.request("GET", f"/v1/episodes/{episode_id}")

    def delete_episode(self, episode_id: str) -> dict:
        return self.request("DELETE", f"/v1/episodes/{episode_id}")

    # Stateless
    def evaluate(self, kernel_code: str, **problem: Any) -> dict:
        return self.request("POST", "/v1/evaluate", {"kernel_code": kernel_code, **problem}, safe_to_repeat=True)

    def reward(self, query: list[str], prompts: list[str], labels: list[str], format: str | None = None) -> dict:
        """OpenRLHF's remote reward; `format` ("cuda" or "kernelbench") for every item, else the
        server's --format."""
        body = {"query": query, "prompts": prompts, "labels": labels}
        if format:
            body["format"] = format
        return self.request("POST", "/v1/reward", body, safe_to_repeat=True)

    def health(self) -> dict:
        """GET /health: {"status": "ok" | "starting" | "no_gpu" | "workers_failed", "error", ...},
        answered with 200 or 503."""
        return self.request("GET", "/health", accept=(503,))


class KagentAsyncClient:
    """The client's calls as coroutines, each run on a thread of its own pool (`max_concurrency`
    at once), so that a trainer's event loop keeps running while kagent compiles and times."""

    def __init__(self, client: KagentClient, max_concurrency: int = 256):
        self.client = client
        self._pool = ThreadPoolExecutor(max_workers=max(1, max_concurrency), thread_name_prefix="kagent-env")

    async def _run(self, fn, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    async def create_episode(self, task_id: str | None = None, **fields: Any) -> dict:
        return await self._run(self.client.create_episode, task_id, **fields)

    async def step(self, episode_id: str, text: str, request_id: str | None = None) -> dict:
        return await self._run(self.client.step, episode_id, text, request_id)

    async def episode(self, episode_id: str) -> dict:
        return await self._run(self.client.episode, episode_id)

    async def delete_episode(self, episode_id: str) -> dict:
        return await self._run(self.client.delete_episode, episode_id)

    async def evaluate(self, kernel_code: str, **problem: Any) -> dict:
        return await self._run(self.client.evaluate, kernel_code, **problem)

    async def health(self) -> dict:
        return await self._run(self.client.health)

    def close(self) -> None:
        self._pool.shutdown(wait=False)
