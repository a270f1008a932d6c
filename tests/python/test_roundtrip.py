"""Issue 49's round trip on the CPU: 20 answers of the KernelBench leaderboard replayed by
`kagent collect --format kernelbench --compile-only`, `kagent rollout`'s prompt rows handed to
every trainer adapter (TRL, verl, SkyRL, verifiers, OpenRLHF's /v1/reward) as its trainer hands
them over, against a real `kagent serve --compile-only` on loopback, each fed the collection's
own answer (tests/python/roundtrip.py has the how). Each episode has the row's format and task
and the row's system prompt; no answer is a format error; an answer that compiled is not scored
(None: it was not run) and every other one scores as rollout scored it. Then the same rows
through a cluster (issue 48): redis-server and two `kagent serve --queue --compile-only` nodes,
which must answer every row as rollout did. One collection for the whole module, its compile
cache shared with the servers: the 20 answers' nvcc compiles are the time it takes."""

import os
import shutil
import time
from pathlib import Path

import pytest

import roundtrip

N_ANSWERS = 20


@pytest.fixture(scope="module")
def trip(tmp_path_factory):
    binary = os.environ.get("KAGENT_BINARY")
    if not binary or not os.path.exists(binary):
        pytest.skip("KAGENT_BINARY does not name a built kagent")
    realworld = roundtrip.default_realworld()
    if not (realworld / "replay.jsonl").exists():
        pytest.skip(f"no leaderboard answers at {realworld} (KAGENT_REALWORLD_DIR)")
    root = tmp_path_factory.mktemp("kagent-roundtrip")
    # One compile cache for collect and serve: serve finds the answers collect compiled.
    env = dict(os.environ, KAGENT_CACHE_DIR=str(root / "cache"), HOME=str(root))
    t0 = time.monotonic()
    # Two compiles at once: both cores (the default leaves one of two to the worker, which has
    # nothing to run here).
    suite, _, prompts, samples = roundtrip.collection(binary, realworld, root, N_ANSWERS, True, env, 900,
                                                      extra_collect=["--compile-jobs", "2"])
    collected_s = time.monotonic() - t0
    adapters, missing = roundtrip.usable_adapters()
    server = roundtrip.Server(binary, root / "data", suite, env, compile_only=True)
    try:
        fronts = [(server.wait_ready(), server.data)]
        results = roundtrip.round_trip(fronts, None, prompts, samples, adapters)
    finally:
        server.stop()
    print(f"\nroundtrip: collect + rollout {collected_s:.0f} s, {len(results)} adapter steps "
          f"in {time.monotonic() - t0 - collected_s:.0f} s; left out: {missing or 'none'}")
    return {"prompts": prompts, "samples": samples, "results": results, "adapters": adapters, "missing": missing,
            "binary": binary, "root": root, "suite": suite, "env": env}


@pytest.fixture(scope="module")
def cluster_trip(trip):
    """The same rows through a cluster (issue 48): redis-server and two `kagent serve --queue
    --compile-only` nodes, row k's episodes on node k mod 2, its /v1/reward on the other node."""
    redis_server = shutil.which("redis-server")
    if not redis_server:
        pytest.skip("redis-server is not installed (scripts/setup.sh installs it): no cluster round trip")
    t0 = time.monotonic()
    # The collection's compile cache (trip's env), shared by both nodes as a shared folder would be.
    cluster = roundtrip.Cluster(trip["binary"], trip["root"] / "cluster", trip["suite"], trip["env"], True, 2,
                                redis_server)
    try:
        fronts = cluster.wait_ready()
        results = roundtrip.round_trip(fronts, None, trip["prompts"], trip["samples"], trip["adapters"])
        jobs = cluster.jobs_per_node()
    finally:
        cluster.stop()
    print(f"\nroundtrip: {len(results)} adapter steps through 2 `serve --queue` nodes in "
          f"{time.monotonic() - t0:.0f} s; jobs per node {jobs}")
    return {"results": results, "fronts": fronts, "jobs": jobs}


def test_every_answer_of_the_collection_reaches_every_adapter(trip):
    assert len(trip["samples"]) == N_ANSWERS
    # Each problem keeps its own name, those with the same contents as another included: one row each.
    assert roundtrip.twins(roundtrip.default_realworld(), [r["task_id"] for r in trip["prompts"]]) >= 2
    assert len(trip["prompts"]) == N_ANSWERS
    assert {"trl", "verl", "verifiers", "openrlhf"} <= set(trip["adapters"])
    assert len(trip["results"]) == N_ANSWERS * len(trip["adapters"])


def test_formats_tasks_and_rewards_match_rollouts_rows(trip):
    found = roundtrip.differences(trip["results"], compile_only=True, reward_tolerance=lambda sample, step: 1e-9)
    assert not found, "\n".join(found)


def test_not_one_answer_is_a_format_error(trip):
    statuses = {(s.task, s.adapter): s.status for _, _, s in trip["results"]}
    assert "format_error" not in statuses.values(), statuses
    # Compile only: what compiled is not scored (None) and passed on as None, never as 0.
    not_scored = [s for _, _, s in trip["results"] if s.status in roundtrip.NOT_SCORED]
    assert not_scored, statuses
    assert all(s.reward is None for s in not_scored)


def test_a_cluster_answers_every_row_as_rollout_did(trip, cluster_trip):
    results = cluster_trip["results"]
    assert len(results) == len(trip["results"])
    found = roundtrip.differences(results, compile_only=True, reward_tolerance=lambda sample, step: 1e-9)
    assert not found, "\n".join(found)
    # Both fronts took episodes, and both nodes' consumers ran jobs: the rows crossed the queue.
    (_, data0), (_, data1) = cluster_trip["fronts"]
    assert any((data0 / "episodes").iterdir()) and any((data1 / "episodes").iterdir())
    assert all(j > 0 for j in cluster_trip["jobs"]), cluster_trip["jobs"]
    # The same statuses as the one server's, adapter by adapter.
    one = {(s.task, s.adapter): (s.status, s.reward) for _, _, s in trip["results"]}
    assert {(s.task, s.adapter): (s.status, s.reward) for _, _, s in results} == one


def test_rounds_repeatability_counts_intervals_that_hold_other_evaluations_medians():
    """The GPU round trip's line on the paired rounds (--speedup-rounds), on hand-made steps."""
    def step(task, median, low, high):
        s = roundtrip.Step("trl", task)
        s.rounds = {"median": median, "low": low, "high": high, "resolved": high <= low * 1.05}
        return ({}, {}, s)

    results = [step("a", 1.00, 0.98, 1.02), step("a", 1.01, 0.99, 1.03), step("a", 1.10, 1.08, 1.12),
               step("b", 2.0, 1.9, 2.1), ({}, {}, roundtrip.Step("trl", "c"))]
    line = roundtrip.rounds_repeatability(results)
    # a: 1.00's interval holds 1.01 only; 1.01's holds 1.00; 1.10's neither. b has one evaluation.
    assert "rounds over 1 answers" in line
    assert "held 2 of 6 other evaluations' estimates" in line
    assert "spread 1.100 (median)" in line
    assert "0 of 3 intervals not within 5%" in line
    assert "no answer with paired rounds" in roundtrip.rounds_repeatability(results[3:])


def test_repeatability_as_a_reward_from_rounds_reads_it():
    """The rounds' geometric mean where they ran (the median in older records), the timing's
    speedup elsewhere, the collection's sample first."""
    def step(task, speedup, rounds=None):
        s = roundtrip.Step("trl", task)
        s.speedup, s.rounds = speedup, rounds
        return s

    a_sample = {"speedup_eager": 1.30, "speedup_rounds": {"mean": 1.00, "median": 1.02}}
    results = [(None, a_sample, step("a", 1.20, {"mean": 1.02, "median": 1.10})),
               (None, a_sample, step("a", 1.25, {"median": 1.01})),
               (None, {"speedup_eager": 3.0}, step("b", 3.3))]
    by_timing = roundtrip.repeatability(results)
    assert "over 2 answers: 0 within 1.05" in by_timing  # a: 1.30 / 1.20, b: 3.3 / 3.0
    by_rounds = roundtrip.repeatability(results, from_rounds=True)
    assert "as `speedup_from: rounds` reads it over 2 answers: 1 within 1.05" in by_rounds  # a: 1.02 / 1.00
    assert "largest 1.100" in by_rounds  # b has no rounds: the timing's speedups
