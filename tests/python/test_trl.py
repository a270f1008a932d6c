"""TRL: the adapter meets GRPOTrainer's environment protocol as TRL itself checks it (a callable
reset, public methods that transformers turns into tool schemas, get_reward) and runs a
3-turn episode against kagent serve (compile-only)."""

import inspect

import pytest

pytest.importorskip("trl", reason="trl is not installed (pip install trl)")

from conftest import BROKEN, GOOD, NO_CODE, TOKEN  # noqa: E402
from transformers.utils import get_json_schema  # noqa: E402
from trl.trainer import grpo_trainer  # noqa: E402

from kagent_env.trl import KagentEnvironment  # noqa: E402


def test_protocol_as_trl_reads_it():
    env = KagentEnvironment(url="http://127.0.0.1:9", token=TOKEN)
    members = dict(inspect.getmembers(type(env), predicate=inspect.isfunction))
    assert "reset" in members and "get_reward" in members
    tools = [n for n in members if n not in ("reset", "get_reward") and not n.startswith("_")]
    assert tools == ["submit_kernel"]
    schema = get_json_schema(env.submit_kernel)
    assert schema["function"]["name"] == "submit_kernel"
    assert schema["function"]["parameters"]["required"] == ["answer"]
    # TRL's own type for a factory's product.
    assert set(inspect.signature(grpo_trainer._SupportsReset.reset).parameters) <= {"self", "kwargs"}


def test_three_turn_episode(server):
    env = KagentEnvironment(url=server, token=TOKEN, max_turns=3)
    assert env.reset(task_id="2_double", prompt=[{"role": "user", "content": "x"}]) is None
    feedback = [env.submit_kernel(a) for a in (NO_CODE, GOOD, BROKEN)]
    assert all(isinstance(f, str) and f for f in feedback)
    assert "undeclared_thing" in feedback[2]
    assert env.submit_kernel(GOOD) == "The episode is over: no more submissions."
    assert env.get_reward() == 0.0  # two failures (0) and a kernel compiled but not run (None)
