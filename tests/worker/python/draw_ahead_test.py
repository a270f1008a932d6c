"""The trials' CPU draws made ahead by the draw process: the same numbers as the worker's own
draws, taken instead of drawn, waited for while drawn, dropped when asked, and left to the worker
where they cannot be shared."""

import fcntl
import json
import os
import subprocess
import sys
import threading
import time

import pytest
import torch

from conftest import KERNELBENCH
from kagent_worker import draw_ahead, draw_files
from kagent_worker.problem import Problem, kernelbench_seed, trial_seeds

# Two tensors (level 1) and one (level 2), 8 MiB each set: real problems, cheap to draw.
REAL = [os.path.join(KERNELBENCH, "level1", "9_Tall_skinny_matrix_multiplication_.py"),
        os.path.join(KERNELBENCH, "level2", "66_Matmul_Dropout_Softmax.py")]

MIXED = """
import torch
class Model(torch.nn.Module):
    def forward(self, x, n, scale, i, b):
        return x * scale
def get_inputs():
    return [torch.randn(3, 8), 2, 0.1 + 0.2, torch.randint(0, 9, (5,), dtype=torch.int64), torch.randn(4).to(torch.bfloat16)]
def get_init_inputs():
    return []
"""

STRIDED = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x
def get_inputs():
    return [torch.randn(8, 4).t()]
def get_init_inputs():
    return []
"""


def fresh_draw(path, seed):
    p = Problem(path)
    kernelbench_seed(seed)
    return list(p._call("get_inputs"))


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor):
            assert isinstance(y, torch.Tensor) and x.dtype == y.dtype and x.shape == y.shape and x.stride() == y.stride()
            assert torch.equal(x, y)
        else:
            assert type(x) is type(y) and x == y


def drawer(folder, budget=1 << 30, min_trial_bytes=0):
    r, w = os.pipe()
    return draw_ahead._Drawer(str(folder), budget, r, w, min_trial_bytes), (r, w)


def test_a_draw_round_trips_every_kind_of_value(tmp_path):
    values = [torch.randn(3, 5), 7, 0.1 + 0.2, None, True, "s", torch.arange(6, dtype=torch.int64).view(2, 3),
              torch.randn(4).to(torch.bfloat16), torch.empty(0, 3), torch.tensor(2.5)]
    draw_files.write_draw(str(tmp_path / "d.draw"), values)
    same(values, draw_files.read_draw(str(tmp_path / "d.draw")))
    back = draw_files.read_draw(str(tmp_path / "d.draw"))
    back[0].zero_()  # a private mapping: the file keeps its numbers
    same(values, draw_files.read_draw(str(tmp_path / "d.draw")))


@pytest.mark.parametrize("path", REAL)
def test_the_worker_takes_the_drawers_numbers_not_its_own(tmp_path, monkeypatch, path):
    folder, other = tmp_path / "b", tmp_path / "a"
    folder.mkdir()
    other.mkdir()
    d, _ = drawer(folder)
    assert d.draw(path, 42, 5)
    seeds = trial_seeds(42, 5)
    # The pool's folders, one per draw process: this problem is in the second.
    monkeypatch.setenv("KAGENT_DRAW_DIR", f"{other}:{folder}")
    p = Problem(path)
    # The worker's own generator is not used: get_inputs() would fail.
    monkeypatch.setattr(p.module, "get_inputs", lambda: (_ for _ in ()).throw(RuntimeError("drew")))
    for s in seeds:
        same(fresh_draw(path, s), p._host_draw(s))
    assert sorted(os.listdir(folder)) == sorted(f"{p.sha256}-{s}{x}" for s in seeds for x in (".draw", ".lock"))


def test_mixed_values_are_shared_and_strided_ones_left_to_the_worker(tmp_path, monkeypatch):
    mixed, strided = tmp_path / "mixed.py", tmp_path / "strided.py"
    mixed.write_text(MIXED)
    strided.write_text(STRIDED)
    folder = tmp_path / "draws"
    folder.mkdir()
    d, (r, _) = drawer(folder)
    assert d.draw(str(mixed), 42, 5) and d.draw(str(strided), 42, 5)
    replies = [json.loads(line) for line in os.read(r, 1 << 16).decode().splitlines()]
    assert replies[0]["drawn"] == 5 and "strides" in replies[1]["skipped"]
    monkeypatch.setenv("KAGENT_DRAW_DIR", str(folder))
    for path in (mixed, strided):
        p = Problem(str(path))
        for s in trial_seeds(42, 5):
            same(fresh_draw(str(path), s), p._host_draw(s))
    p = Problem(str(strided))
    assert draw_files.take(p.sha256, trial_seeds(42, 1)[0]) is None


def test_a_draw_in_progress_is_waited_for_within_a_bound(tmp_path, monkeypatch):
    monkeypatch.setenv("KAGENT_DRAW_DIR", str(tmp_path))
    base = draw_files.draw_base(str(tmp_path), "ab" * 32, 7)
    lock = os.open(base + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)
    start = time.monotonic()
    assert draw_files.take("ab" * 32, 7, draw_files.take_deadline(0.3)) is None  # not done in time: the worker draws
    assert time.monotonic() - start >= 0.3
    values = [torch.randn(16)]

    def finish():
        time.sleep(0.3)
        draw_files.write_draw(base + ".draw", values)
        fcntl.flock(lock, fcntl.LOCK_UN)

    t = threading.Thread(target=finish)
    t.start()
    got = draw_files.take("ab" * 32, 7, draw_files.take_deadline(10))
    t.join()
    os.close(lock)
    same(values, got)


def test_one_wait_for_the_drawer_bounds_all_of_a_problems_trials(tmp_path, monkeypatch):
    """A drawer stuck on a problem holds each trial's lock: the worker's prefetch waits for it once
    (TAKE_WAIT_S), then draws every trial itself, where it waited once per trial before."""
    problem = tmp_path / "p.py"
    problem.write_text(MIXED)
    p = Problem(str(problem))
    monkeypatch.setenv("KAGENT_DRAW_DIR", str(tmp_path))
    monkeypatch.setattr(draw_files, "TAKE_WAIT_S", 0.3)
    seeds = trial_seeds(42, 5)
    locks = []
    for s in seeds:
        locks.append(os.open(draw_files.draw_base(str(tmp_path), p.sha256, s) + ".lock", os.O_RDWR | os.O_CREAT, 0o644))
        fcntl.flock(locks[-1], fcntl.LOCK_EX)
    start = time.monotonic()
    p.prefetch(42, trials=5)
    waited = time.monotonic() - start
    for lock in locks:
        os.close(lock)
    assert 0.3 <= waited < 0.3 * 2, waited  # one bound, not five
    for s in seeds:
        same(fresh_draw(str(problem), s), p._host_draw(s))  # drawn by the worker, from the same seeds


def replies(r):
    return [json.loads(line) for line in os.read(r, 1 << 16).decode().splitlines()]


def test_a_dropped_problem_is_kept_until_its_room_is_needed(tmp_path):
    d, (r, _) = drawer(tmp_path, budget=1)  # room for one problem at a time
    assert d.draw(REAL[0], 42, 2)
    first = sorted(os.listdir(tmp_path))
    assert len(first) == 4
    assert not d.draw(REAL[1], 42, 2)  # no room while the first is in use
    d.handle({"op": "drop", "path": REAL[0]})
    assert sorted(os.listdir(tmp_path)) == first  # no longer in use, still kept
    d.handle({"op": "draw", "path": REAL[0], "seed": 42, "trials": 2})  # asked again: taken, not drawn
    assert replies(r)[-1] == {"path": REAL[0], "drawn": 2, "bytes": 0, "seconds": 0, "kept": True}
    assert not d.pending
    d.handle({"op": "drop", "path": REAL[0]})
    assert d.draw(REAL[1], 42, 2)  # its room is needed now: the first goes
    assert not any(f in os.listdir(tmp_path) for f in first) and len(os.listdir(tmp_path)) == 4


def test_every_draw_request_gets_one_reply_even_when_dropped_before_it_is_drawn(tmp_path):
    d, (r, _) = drawer(tmp_path)
    d.handle({"op": "draw", "path": REAL[0], "seed": 42, "trials": 2})
    d.handle({"op": "drop", "path": REAL[0]})
    assert replies(r) == [{"path": REAL[0], "skipped": "dropped before it was drawn"}]
    assert not d.pending and os.listdir(tmp_path) == []


def test_the_process_draws_what_it_is_asked_in_order_and_ends_with_its_pipe(tmp_path):
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    code = ("import sys; from kagent_worker import draw_ahead; "
            f"sys.exit(draw_ahead.serve({str(tmp_path)!r}, 1 << 30, {req_r}, {rep_w}, 0))")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(draw_ahead.__file__)))
    proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=(req_r, rep_w), env=env)
    os.close(req_r)
    os.close(rep_w)
    for path in REAL + [os.path.join(str(tmp_path), "missing.py")]:
        os.write(req_w, (json.dumps({"op": "draw", "path": path, "seed": 42, "trials": 2}) + "\n").encode())
    with os.fdopen(rep_r) as replies:
        assert json.loads(replies.readline()) == {"ready": True}
        got = [json.loads(replies.readline()) for _ in range(3)]
        assert [g["path"] for g in got] == REAL + [os.path.join(str(tmp_path), "missing.py")]
        assert got[0]["drawn"] == 2 and got[1]["drawn"] == 2 and "skipped" in got[2]
        os.close(req_w)
        assert proc.wait(timeout=60) == 0


def test_small_problems_are_left_to_the_worker(tmp_path, monkeypatch):
    d, (r, _) = drawer(tmp_path, min_trial_bytes=draw_ahead.MIN_TRIAL_BYTES)
    assert d.draw(REAL[0], 42, 5)  # 8 MiB a trial: under the default floor
    assert "small" in json.loads(os.read(r, 1 << 16))["skipped"]
    assert os.listdir(tmp_path) == []
    monkeypatch.setenv("KAGENT_DRAW_DIR", str(tmp_path))
    p = Problem(REAL[0])
    s = trial_seeds(42, 1)[0]
    same(fresh_draw(REAL[0], s), p._host_draw(s))
