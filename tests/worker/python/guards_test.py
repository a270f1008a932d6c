"""The guards' Python-side checks: fp64 truth, tampering, threads."""

import threading
import time

import torch

from kagent_worker.guards import (guard_snapshot, guard_tampering, new_python_threads, put_back_autotuning,
                                  python_threads)


def test_tampering_with_timing_and_torch_is_found_and_nothing_else():
    snap = guard_snapshot()
    assert guard_tampering(snap) == []
    saved_relu, saved_clock = torch.relu, time.perf_counter
    try:
        torch.relu = lambda x: x
        time.perf_counter = lambda: 0.0
        found = {f["name"]: f["message"] for f in guard_tampering(snap)}
        assert "torch.relu" in found["torch_patched"]
        assert "time.perf_counter" in found["timing_tampered"]
    finally:
        torch.relu, time.perf_counter = saved_relu, saved_clock
    assert guard_tampering(snap) == []


def test_a_changed_precision_setting_is_found():
    snap = guard_snapshot()
    saved = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = not saved
        assert any("allow_tf32" in f["message"] for f in guard_tampering(snap))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


def test_cudnn_benchmark_is_no_precision_setting_but_is_put_back_and_noted_once():
    # 8 of CUDA-L1's answers switch only cudnn.benchmark on: KernelBench's harness judges them
    # correct. Not torch_patched ("precision settings changed"): a cudnn_benchmark finding (reject
    # is strict's action; the policy table makes it a flag under kernelbench), once, and the
    # switch is put back so that the reference's calls and the baselines run as they would alone.
    snap = guard_snapshot()
    saved = torch.backends.cudnn.benchmark
    try:
        torch.backends.cudnn.benchmark = not saved
        found = guard_tampering(snap)
        assert [f["name"] for f in found] == ["cudnn_benchmark"]
        assert found[0]["action"] == "reject"
        assert f"set to {not saved!r}" in found[0]["message"]
        assert torch.backends.cudnn.benchmark == saved  # put back
        torch.backends.cudnn.benchmark = not saved  # a forward that switches it on every call
        assert guard_tampering(snap) == []  # noted once
        assert torch.backends.cudnn.benchmark == saved
    finally:
        torch.backends.cudnn.benchmark = saved


def test_cudnn_benchmark_switched_at_load_is_put_back_at_once_and_reported_later():
    snap = guard_snapshot()
    saved = torch.backends.cudnn.benchmark
    try:
        torch.backends.cudnn.benchmark = not saved  # an answer's module-level switch
        put_back_autotuning(snap)  # right after the candidate loaded: its trials run as the reference's
        assert torch.backends.cudnn.benchmark == saved
        assert [f["name"] for f in guard_tampering(snap)] == ["cudnn_benchmark"]
    finally:
        torch.backends.cudnn.benchmark = saved


def test_tf32_beside_cudnn_benchmark_is_still_a_precision_change():
    snap = guard_snapshot()
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.benchmark
    try:
        torch.backends.cuda.matmul.allow_tf32 = not saved[0]
        torch.backends.cudnn.benchmark = not saved[1]
        found = {f["name"]: f["message"] for f in guard_tampering(snap)}
        assert "allow_tf32" in found["torch_patched"]  # TF32 lowers the reference's precision too: rejected
        assert "cudnn.benchmark" not in found["torch_patched"]
        assert "cudnn_benchmark" in found
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.benchmark = saved


def test_new_threads_are_named():
    before = python_threads()
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="candidate-pool")
    t.start()
    try:
        assert new_python_threads(before) == ["candidate-pool"]
    finally:
        stop.set()
        t.join()
    assert new_python_threads(before) == []


def test_reading_a_class_annotations_is_no_patch_but_replacing_a_method_is():
    # Python creates a class's own __annotations__ the first time anyone reads it (torch.jit.script,
    # typing, dataclasses and inspect do); real answers scripted modules and were once rejected.
    cls = torch.nn.ConvTranspose2d
    if "__annotations__" in vars(cls) and not vars(cls)["__annotations__"]:
        del cls.__annotations__  # as a fresh interpreter has it
    snap = guard_snapshot()
    _ = cls.__annotations__
    _ = torch.nn.Conv2d.__annotations__
    assert "__annotations__" in vars(cls)
    assert guard_tampering(snap) == []
    saved = cls.forward
    try:
        cls.forward = lambda self, x, output_size=None: x
        found = {f["name"]: f["message"] for f in guard_tampering(snap)}
        assert "torch.nn.ConvTranspose2d.forward" in found["torch_patched"]
    finally:
        cls.forward = saved
    assert guard_tampering(snap) == []


def test_trial_inputs_changed_after_the_candidate_loaded_are_rejected_once(tmp_path):
    # The trials take the kept draws after the candidate loaded: one it changed is drawn again
    # (problem.py) and the candidate is rejected for it, under both policies (inputs_modified).
    from kagent_worker.problem import open_problem, verify_kept
    path = tmp_path / "p.py"
    path.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
                    "def get_inputs():\n    return [torch.randn(4, 4)]\ndef get_init_inputs():\n    return []\n")
    problem = open_problem(str(path))
    problem.prefetch(42, 5)  # the request's start: verify_kept, then the draws
    snap = guard_snapshot()  # before the candidate loads
    assert guard_tampering(snap) == []
    seed = problem.trial_seeds(42, 5)[0]
    problem._draws.by_seed[seed][0].zero_()  # the candidate, at load
    problem.kernelbench_inputs("cpu", seed)  # a trial
    found = [f for f in guard_tampering(snap) if f["name"] == "inputs_modified"]
    assert len(found) == 1 and found[0]["action"] == "reject" and f"seed {seed}" in found[0]["message"]
    assert guard_tampering(snap) == []  # reported once
    assert verify_kept() == []
