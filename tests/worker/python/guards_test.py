"""The guards' Python-side checks: fp64 truth, tampering, threads."""

import threading
import time

import torch

from kagent_worker.guards import guard_snapshot, guard_tampering, new_python_threads, python_threads


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
