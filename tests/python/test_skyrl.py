"""SkyRL: the adapter is a real skyrl-gym BaseTextEnv, made through skyrl-gym's registry, and
runs a 3-turn episode against kagent serve (compile-only)."""

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym", reason="skyrl-gym is not installed (pip install skyrl-gym)")

from conftest import BROKEN, GOOD, NO_CODE, TOKEN  # noqa: E402
from skyrl_gym.envs.base_text_env import BaseTextEnv  # noqa: E402

import kagent_env.skyrl  # noqa: E402,F401  (registers "kagent")


def test_three_turn_episode(server):
    prompt = [{"role": "system", "content": "s"}, {"role": "user", "content": "make relu fast"}]
    env = skyrl_gym.make("kagent", env_config={"url": server, "token": TOKEN},
                         extras={"reward_spec": {"method": "rule", "ground_truth": "1_relu"}, "max_turns": 3})
    assert isinstance(env, BaseTextEnv)
    obs, info = env.init(prompt)
    assert obs == prompt and info["episode_id"]
    outs = [env.step(a) for a in (NO_CODE, GOOD, BROKEN)]
    assert [o["done"] for o in outs] == [False, False, True]
    assert outs[0]["metadata"]["status"] == "format_error"
    assert outs[1]["metadata"]["compiled"] is True and outs[1]["metadata"]["status"] == "compiled_not_run"
    assert outs[2]["metadata"]["status"] == "compile_error"
    assert outs[0]["observations"][0]["role"] == "user" and outs[2]["observations"] == []
    # Failures score 0; the kernel that compiled was not run (compile only): no reward, None.
    assert [o["reward"] for o in outs] == [0.0, None, 0.0]
    env.close()


@pytest.mark.parametrize("extras, config", [
    ({"reward_spec": {"method": "rule", "ground_truth": "1_relu"}, "extra_info": {"format": "kernelbench"}}, {}),
    ({"reward_spec": {"method": "rule", "ground_truth": "1_relu"}, "format": "kernelbench"}, {}),
    ({"reward_spec": {"method": "rule", "ground_truth": "1_relu"}}, {"format": "kernelbench"}),  # env_config's default
])
def test_a_rows_format_opens_that_kind_of_episode(server, extras, config):
    env = skyrl_gym.make("kagent", env_config={"url": server, "token": TOKEN, **config}, extras=extras)
    _, info = env.init([])
    start = env.client.episode(info["episode_id"])["start"]
    env.close()
    assert (start["format"], start["task"]) == ("kernelbench", "1_relu")
