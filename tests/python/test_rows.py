"""What the adapters read from a `kagent rollout` prompt row wherever its trainer puts it (the
task, the answer format), and the one scoring rule they share: a step that was not scored makes
the episode's score unknown (None, NaN where a number is needed), never 0 (issue 49)."""

import asyncio
import math

import pytest

from kagent_env.rows import as_number, best_reward, format_of, task_of

ROW = {"prompt": [{"role": "system", "content": "s"}, {"role": "user", "content": "t"}],
       "env_class": "kagent", "reward_spec": {"method": "rule", "ground_truth": "1_relu"},
       "extra_info": {"task_id": "1_relu", "format": "kernelbench",
                      "interaction_kwargs": {"name": "kagent", "task_id": "1_relu", "format": "kernelbench"}}}


@pytest.mark.parametrize("row", [
    {"format": "kernelbench", "task_id": "1_relu"},
    {"extra_info": {"format": "kernelbench", "task_id": "1_relu"}},
    {"extra_info": {"interaction_kwargs": {"format": "kernelbench", "problem": "1_relu"}}},
    {"interaction_kwargs": {"format": "kernelbench", "task_id": "1_relu"}},
    {"reward_spec": {"ground_truth": "1_relu", "format": "kernelbench"}},
    {"name": "kagent", "problem": "1_relu", "format": "kernelbench"},  # verl's interaction_kwargs themselves
    ROW,
])
def test_format_and_task_wherever_the_row_holds_them(row):
    assert format_of(row) == "kernelbench"
    assert task_of(row) == "1_relu"


def test_a_row_that_names_none_or_two():
    assert format_of({"task_id": "x"}) is None  # the server's --format then
    with pytest.raises(ValueError, match="two formats"):
        format_of({"format": "cuda", "extra_info": {"format": "kernelbench"}})
    with pytest.raises(ValueError, match="two tasks"):
        task_of({"task_id": "a", "reward_spec": {"ground_truth": "b"}})
    with pytest.raises(ValueError, match="not one of"):
        format_of({"format": "triton"})


def test_not_scored_is_never_zero():
    assert best_reward([0.0, None]) is None  # no code (0), then an answer compiled but not run
    assert best_reward([None]) is None
    assert best_reward([0.0, 0.7]) == 0.7
    assert best_reward([]) == 0.0            # nothing submitted
    assert math.isnan(as_number(None)) and as_number(0.0) == 0.0


def test_verifiers_rubric_gets_nan_for_not_scored():
    from adapter_driver import use_verifiers_stand_in

    use_verifiers_stand_in()
    from kagent_env.verifiers import KagentMultiTurnEnv

    assert math.isnan(KagentMultiTurnEnv.best_reward({"kagent_rewards": [None]}))
    assert math.isnan(KagentMultiTurnEnv.best_reward({"kagent_rewards": [0.0, None]}))
    assert KagentMultiTurnEnv.best_reward({"kagent_rewards": [0.0, 0.4]}) == 0.4


def test_verifiers_opens_the_rows_format(server):
    from adapter_driver import use_verifiers_stand_in
    from conftest import TOKEN

    use_verifiers_stand_in()
    from kagent_env.verifiers import KagentMultiTurnEnv

    env = KagentMultiTurnEnv(url=server, token=TOKEN, max_turns=2)
    state = {"prompt": ROW["prompt"], "info": ROW["extra_info"]}

    async def run():
        await env.setup_state(state)
        start = (await env.client.episode(state["kagent_episode"]))["start"]
        await env._delete_episode(state)
        return start

    start = asyncio.run(run())
    assert (start["format"], start["task"]) == ("kernelbench", "1_relu")
