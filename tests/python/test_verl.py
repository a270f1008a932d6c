"""verl: the adapter is a BaseInteraction and runs a 3-turn episode (compile-only). Where verl
is not installed (verl 0.7.1, the last on PyPI with verl.interactions, pins numpy<2, which this
torch cannot use: it goes in its own venv), its BaseInteraction is a stand-in with verl's
constructor (adapter_driver.use_verl_stand_in) and the adapter's own code runs the same."""

import asyncio

from adapter_driver import use_verl_stand_in
from conftest import BROKEN, GOOD, NO_CODE, TOKEN

use_verl_stand_in()
from kagent_env.verl import KagentInteraction  # noqa: E402


def test_three_turn_episode(server):
    it = KagentInteraction({"url": server, "token": TOKEN, "max_turns": 3})

    async def run():
        iid = await it.start_interaction("i0", task_id="1_relu")
        done = []
        for a in (NO_CODE, GOOD, BROKEN):
            d, text, reward, meta = await it.generate_response(iid, [{"role": "assistant", "content": a}])
            done.append(d)
        await it.finalize_interaction(iid)
        return done

    assert asyncio.run(run()) == [False, False, True]


def test_interaction_kwargs_of_a_rollout_row_open_its_format(server):
    # What `kagent rollout` writes into extra_info.interaction_kwargs, as verl passes them on.
    it = KagentInteraction({"url": server, "token": TOKEN, "max_turns": 1})
    kwargs = {"name": "kagent", "problem": "1_relu", "format": "kernelbench"}

    async def run():
        iid = await it.start_interaction("i1", **kwargs)
        start = (await it.client.episode(it._episodes[iid]["episode_id"]))["start"]
        _, _, reward, meta = await it.generate_response(iid, [{"role": "assistant", "content": "```python\nclass ModelNew(:\n```"}])
        score = await it.calculate_score(iid)
        await it.finalize_interaction(iid)
        return start, reward, meta["status"], score

    start, reward, status, score = asyncio.run(run())
    assert (start["format"], start["task"]) == ("kernelbench", "1_relu")
    assert (reward, status, score) == (0.0, "runtime_error", 0.0)  # not Python: a failure, scored 0


def test_is_a_base_interaction():
    from verl.interactions.base import BaseInteraction

    assert issubclass(KagentInteraction, BaseInteraction)
