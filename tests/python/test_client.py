"""The stdlib client against a real server: errors come back as KagentError with the code."""

import pytest

from conftest import NO_CODE, TOKEN
from kagent_env import KagentClient, KagentError


def test_errors_carry_status_and_code(server):
    with pytest.raises(KagentError) as e:
        KagentClient(server, token="wrong").create_episode("1_relu")
    assert (e.value.status, e.value.code) == (403, "wrong_token")
    c = KagentClient(server, token=TOKEN)
    with pytest.raises(KagentError) as e:
        c.step("no-such-episode", NO_CODE)
    assert (e.value.status, e.value.code) == (404, "unknown_episode")
    assert c.health()["status"] == "ok"
