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
    # Two failures (0) and a kernel compiled but not run (None), which may have been the best:
    # not scored, None (TRL's NaN), never the 0 of an episode with no code at all.
    assert env.get_reward() is None


def test_reset_with_a_rollout_row_opens_its_format(server):
    # `kagent rollout`'s prompt row of a KernelBench collection: the format in extra_info (and
    # verl's interaction_kwargs), the task in reward_spec.
    row = {"prompt": [{"role": "user", "content": "x"}], "reward_spec": {"method": "rule", "ground_truth": "1_relu"},
           "extra_info": {"task_id": "1_relu", "format": "kernelbench", "max_turns": 1}}
    env = KagentEnvironment(url=server, token=TOKEN)
    env.reset(**row)
    start = env._client.episode(env._episode_id)["start"]
    assert (start["format"], start["task"], start["max_turns"]) == ("kernelbench", "1_relu", 1)
    # An answer that is not Python is a failure (0), not unscored: the episode scores 0.
    env.submit_kernel("```python\nclass ModelNew(:\n```\n")
    assert env.get_reward() == 0.0
