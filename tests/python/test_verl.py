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


def test_is_a_base_interaction():
    from verl.interactions.base import BaseInteraction

    assert issubclass(KagentInteraction, BaseInteraction)
