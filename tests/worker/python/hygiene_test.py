"""The worker's state check (kagent_worker.hygiene) on the CPU: each kind of state a candidate
can change is found, put back or marked for a fresh worker; kagent's own steps (torch.compile's
first use among them) leave nothing to report."""

import functools
import threading
import time

import pytest
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from kagent_worker import hygiene


def items(findings):
    return {f["item"]: f for f in findings}


def test_nothing_changed_nothing_found():
    snap = hygiene.capture()
    torch.randn(100) @ torch.randn(100)  # ordinary work moves the generator only
    assert hygiene.restore(snap) == []


def test_torch_compile_first_use_is_not_a_patch():
    # torch._dynamo's import wraps functions of torch's own (manual_seed, Module methods): no finding.
    snap = hygiene.capture()
    f = torch.compile(lambda x: torch.sin(x) + 1, backend="eager")
    f(torch.randn(8))
    torch.manual_seed(3)
    assert hygiene.restore(snap) == []


def test_generators_put_back_silently():
    snap = hygiene.capture()
    first = torch.randn(5)
    torch.manual_seed(1234)
    torch.randn(1000)
    assert hygiene.restore(snap) == []
    assert torch.equal(torch.randn(5), first)  # the generator is where the snapshot left it


def test_default_dtype_and_device():
    snap = hygiene.capture()
    torch.set_default_dtype(torch.float64)
    torch.set_default_device("meta")
    found = items(hygiene.restore(snap))
    assert found["torch.get_default_dtype()"]["action"] == "restored"
    assert found["torch.get_default_device()"]["action"] == "restored"
    assert torch.get_default_dtype() == torch.float32
    assert torch.get_default_device() == torch.device("cpu")
    assert torch.zeros(2).device.type == "cpu"
    assert not any(f["charged"] for f in found.values())


def test_working_directory_put_back(tmp_path):
    # The worker's working directory is its scratch folder: a candidate that changes directory
    # must not send the next one's relative build folder elsewhere.
    import os
    home = os.getcwd()
    snap = hygiene.capture()
    os.chdir(tmp_path)
    try:
        found = items(hygiene.restore(snap))
    finally:
        os.chdir(home)
    assert found["os.getcwd()"]["action"] == "restored"
    assert str(tmp_path) in found["os.getcwd()"]["detail"]
    assert not found["os.getcwd()"]["charged"]
    assert hygiene.restore(hygiene.capture()) == []


def test_grad_mode_and_backend_flags():
    snap = hygiene.capture()
    before = torch.backends.cudnn.benchmark
    torch.set_grad_enabled(False)
    torch.backends.cudnn.benchmark = not before
    torch.set_float32_matmul_precision("medium")
    found = items(hygiene.restore(snap))
    assert "torch.is_grad_enabled()" in found
    assert found["torch.backends.cudnn.benchmark"]["detail"] == f"{not before!r} -> {before!r}"
    assert "torch.get_float32_matmul_precision()" in found
    assert torch.is_grad_enabled()
    assert torch.backends.cudnn.benchmark == before
    assert torch.get_float32_matmul_precision() == "highest"


def test_patched_functions_put_back():
    original_gelu, original_add = F.gelu, torch.Tensor.add
    snap = hygiene.capture()

    @functools.wraps(original_gelu)
    def fake_gelu(x, *a, **k):
        return x

    F.gelu = fake_gelu
    torch.Tensor.add = lambda self, other: self
    torch.nn.functional.relu = torch.sigmoid  # another torch function is still a patch
    found = items(hygiene.restore(snap))
    assert found["patched_function"]["action"] == "restored"
    assert "torch.nn.functional.gelu" in found["patched_function"]["detail"]
    assert F.gelu is original_gelu and torch.Tensor.add is original_add
    assert torch.nn.functional.relu(torch.tensor([-1.0])).item() == 0.0


def test_a_problems_class_patched_through_its_names_is_put_back(tmp_path):
    # An answer runs in its problem's names (problem.py): `Model.forward = ...` in it would change
    # the reference of every later evaluation of that problem in the worker.
    from kagent_worker.problem import Problem
    path = tmp_path / "problem.py"
    path.write_text("import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n\n"
                    "def get_inputs():\n    return [torch.zeros(2)]\n\ndef get_init_inputs():\n    return []\n")
    problem = Problem(str(path))
    original = problem.module.Model.forward
    snap = hygiene.capture()
    problem.module.Model.forward = lambda self, x: x
    found = items(hygiene.restore(snap))
    assert "Model.forward" in found["patched_function"]["detail"]
    assert problem.module.Model.forward is original
    assert problem.make_model("cpu")(torch.zeros(2)).tolist() == [1.0, 1.0]


def test_during_an_evaluation_its_own_no_grad_stays():
    # A reference that failed beside the candidate: the state is put back mid-evaluation, where
    # no_grad is kagent's own (evaluation.cpp), not the candidate's change.
    snap = hygiene.capture()
    try:
        torch.set_grad_enabled(False)
        torch.set_default_dtype(torch.float64)
        found = items(hygiene.restore(snap, during_evaluation=True))
        assert "torch.is_grad_enabled()" not in found
        assert not torch.is_grad_enabled()
        assert found["torch.get_default_dtype()"]["detail"] == "torch.float64 -> torch.float32"
    finally:
        torch.set_grad_enabled(True)
        torch.set_default_dtype(torch.float32)


def test_function_mode_left_active():
    snap = hygiene.capture()
    TorchFunctionMode().__enter__()
    found = items(hygiene.restore(snap))
    assert found["torch_function_mode"]["action"] == "restored"
    assert torch._C._len_torch_function_stack() == snap["function_modes"]


def test_thread_still_running_needs_a_fresh_worker():
    stop = threading.Event()
    snap = hygiene.capture()
    t = threading.Thread(target=lambda: stop.wait(30), name="candidate-spinner")
    t.start()
    try:
        found = items(hygiene.restore(snap))
        assert found["python_thread"]["action"] == "replaced"
        assert found["python_thread"]["charged"]
        assert "candidate-spinner" in found["python_thread"]["detail"]
    finally:
        stop.set()
        t.join()


def test_library_threads_are_not_the_candidates():
    snap = hygiene.capture()
    timer = threading.Timer(30, lambda: None)  # a thread class of the standard library
    timer.start()
    try:
        assert hygiene.restore(snap) == []
    finally:
        timer.cancel()
        timer.join()


def test_a_thread_that_ended_leaves_nothing():
    snap = hygiene.capture()
    t = threading.Thread(target=time.sleep, args=(0.01,))
    t.start()
    t.join()
    assert hygiene.restore(snap) == []


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_generator_left_in_capture_mode():
    torch.cuda.init()
    snap = hygiene.capture()
    g = torch.cuda.CUDAGraph()
    try:
        g.capture_begin()  # on the default stream: refused after the generator entered capture mode
    except RuntimeError:
        pass
    found = items(hygiene.restore(snap))
    assert "cuda_generator" in found
    torch.empty(4, device="cuda").uniform_()  # draws again


def test_one_switch_seen_two_ways_is_named_both_ways():
    # allow_tf32 and the matmul precision are one switch: putting the precision back first
    # used to hide allow_tf32 from the finding (the GPU hygiene suite's backend_flags case).
    snap = hygiene.capture()
    torch.backends.cuda.matmul.allow_tf32 = True
    found = items(hygiene.restore(snap))
    assert "torch.backends.cuda.matmul.allow_tf32" in found
    assert "torch.get_float32_matmul_precision()" in found
    assert not torch.backends.cuda.matmul.allow_tf32
    assert torch.get_float32_matmul_precision() == "highest"


def test_tqdm_monitor_thread_is_a_librarys():
    # torch.compile's progress bars start tqdm's monitor thread, which outlives them: the GPU
    # run's warm-gelu suite found every evaluation with the torch.compile baseline charged
    # "python_thread: 1 still running: tqdm_monitor".
    tqdm = pytest.importorskip("tqdm")
    snap = hygiene.capture()
    saved = tqdm.tqdm.monitor_interval
    tqdm.tqdm.monitor_interval = 10
    try:
        for _ in tqdm.tqdm(range(3), disable=False, file=open("/dev/null", "w")):
            pass
        assert any(type(t).__name__ == "TMonitor" for t in threading.enumerate()), "tqdm started no monitor here"
        assert "python_thread" not in items(hygiene.restore(snap))
    finally:
        tqdm.tqdm.monitor_interval = saved
        if tqdm.tqdm.monitor is not None:
            tqdm.tqdm.monitor.exit()
            tqdm.tqdm.monitor = None
