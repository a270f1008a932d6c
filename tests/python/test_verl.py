"""verl: the adapter is a real BaseInteraction and runs a 3-turn episode (compile-only)."""

import asyncio

import pytest

pytest.importorskip("verl.interactions.base",
                    reason="verl with verl.interactions is not installed: verl 0.7.1, the last on PyPI with "
                           "it, pins numpy<2 (this torch needs numpy 2), so it goes in its own venv")

from conftest import BROKEN, GOOD, NO_CODE, TOKEN  # noqa: E402

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
