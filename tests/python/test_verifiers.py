"""verifiers: the adapter is a real MultiTurnEnv (checked where a verifiers with MultiTurnEnv installs)."""

import pytest

vf = pytest.importorskip("verifiers", reason="verifiers is not installed (pip install 'verifiers[all]<0.4')")
if not hasattr(vf, "MultiTurnEnv"):
    pytest.skip("this verifiers has no MultiTurnEnv (0.4 moved to verifiers.v1; 0.3 needs verifiers[all])",
                allow_module_level=True)

from kagent_env.verifiers import KagentMultiTurnEnv  # noqa: E402


def test_is_a_multiturn_env():
    assert issubclass(KagentMultiTurnEnv, vf.MultiTurnEnv)
