"""Thin adapters that plug `kagent serve` into RL trainers (pure Python, stdlib client).

Each adapter is imported only when its trainer is installed:
  kagent_env.skyrl      SkyRL's BaseTextEnv
  kagent_env.verl       verl's BaseInteraction
  kagent_env.trl        TRL's environment_factory class
  kagent_env.verifiers  verifiers' MultiTurnEnv
OpenRLHF needs no code: --remote_rm_url http://HOST:PORT/v1/reward (it sends no answer format:
start kagent serve with --format kernelbench for KernelBench-format answers).
"""

from kagent_env.client import KagentAsyncClient, KagentClient, KagentError, KagentUnavailable

__all__ = ["KagentAsyncClient", "KagentClient", "KagentError", "KagentUnavailable"]
