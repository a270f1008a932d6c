"""N episodes at once through the verl and TRL adapters, driven as their trainers drive them
(adapter_driver.py), against a real kagent serve --compile-only: the episodes' steps overlap in
time (an adapter that blocks verl's event loop runs them one after another), TRL's episodes are
deleted on the server once their reward is read, and a server that is not there is reported
within seconds, not after minutes of retries."""

import socket
import time

import pytest

from adapter_driver import run_trl, run_verl, use_verl_stand_in
from conftest import TOKEN, kernel_answer
from kagent_env import KagentClient, KagentUnavailable

N = 4


def open_episodes(url):
    return KagentClient(url, token=TOKEN).health()["episodes_open"]


def test_verl_interactions_overlap_on_one_event_loop(server):
    stand_in = use_verl_stand_in()
    before = open_episodes(server)
    # A kernel nvcc has not seen: each step takes seconds, on the server's compile pool.
    run = run_verl(server, TOKEN, ["1_relu", "2_double"], [kernel_answer("v * 5.f + 0.25f")], N)
    assert run.steps_overlap(0), [e.steps for e in run.episodes]
    assert run.all_in_flight_at_once()
    for e in run.episodes:
        assert e.statuses == ["compiled_not_run"]
        assert e.rewards == [None] and e.score is None  # compile only: nothing run, nothing scored
    assert open_episodes(server) == before  # finalize_interaction deleted every one
    if stand_in:
        print("verl is not installed: its BaseInteraction was a stand-in with verl's constructor")


def test_trl_rollouts_overlap_and_leave_no_episode_behind(server):
    before = open_episodes(server)
    run = run_trl(server, TOKEN, ["2_double", "1_relu"], [kernel_answer("v * 6.f - 0.5f")], N)
    assert run.steps_overlap(0), [e.steps for e in run.episodes]
    assert all(e.score is None for e in run.episodes)
    assert open_episodes(server) == before  # get_reward deleted each rollout's episode


def test_trl_reset_deletes_the_previous_rollouts_episode(server):
    from kagent_env.trl import KagentEnvironment

    before = open_episodes(server)
    env = KagentEnvironment(url=server, token=TOKEN, max_turns=2)
    for _ in range(3):  # TRL reuses an environment: reset after reset, get_reward not always called
        env.reset(task_id="1_relu")
    assert open_episodes(server) == before + 1
    env.get_reward()
    assert open_episodes(server) == before


def test_a_server_that_is_not_there_is_reported_in_seconds():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    start = time.monotonic()
    with pytest.raises(KagentUnavailable) as e:
        KagentClient(f"http://127.0.0.1:{port}").create_episode("1_relu")
    elapsed = time.monotonic() - start
    assert elapsed < 10, elapsed
    assert "Connection refused" in str(e.value) and str(port) in str(e.value)
