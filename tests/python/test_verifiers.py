"""verifiers: the adapter is a real MultiTurnEnv (checked where verifiers installs)."""

import pytest

vf = pytest.importorskip("verifiers", reason="verifiers is not installed: it needs the prime-* sandboxes and MCP stack")

from kagent_env.verifiers import KagentMultiTurnEnv  # noqa: E402


def test_is_a_multiturn_env():
    assert issubclass(KagentMultiTurnEnv, vf.MultiTurnEnv)
