"""The worker's load_inline while an answer loads (kagent_worker/inline_patch.py): a call
whose key kagent built gets kagent's ops, anything else goes to torch's function with the
reason recorded, and an option torch does not know is the answer's error in one line."""

import functools
import os
import shutil

import pytest
import torch
import torch.utils.cpp_extension as cpp_extension

from kagent_worker import inline_calls
from kagent_worker.inline_patch import InlineExtensions
from kagent_worker.loading import ExtensionBuildError, KagentError, exec_file

ANSWERS = os.path.join(os.path.dirname(__file__), "answers")


@pytest.fixture
def torch_build(monkeypatch):
    """torch's load_inline/load replaced by recorders (a real build takes a minute): what the
    patch saves as 'torch's function' is this one, with torch's signature."""
    calls = []

    def fake(real):
        @functools.wraps(real)
        def f(*args, **kwargs):
            calls.append(inspect_bind(real, args, kwargs))
            return "torch's module"
        return f

    monkeypatch.setattr(cpp_extension, "load_inline", fake(cpp_extension.load_inline))
    monkeypatch.setattr(cpp_extension, "load", fake(cpp_extension.load))
    return calls


def inspect_bind(real, args, kwargs):
    import inspect
    return inspect.signature(real).bind(*args, **kwargs).arguments


def static_keys(name):
    with open(os.path.join(ANSWERS, name)) as f:
        return {c["name"]: c["key"] for c in inline_calls.extract_calls(f.read()) if c["ok"]}


@pytest.mark.parametrize("answer", ["elementwise_add.py", "cpp_only.py"])
def test_the_static_key_is_found_again_when_the_answer_runs(answer, torch_build, monkeypatch):
    keys = static_keys(answer)
    (name, key), = keys.items()
    bound = []
    before = cpp_extension.load_inline
    monkeypatch.setattr(InlineExtensions, "_bind", staticmethod(lambda hit, n: bound.append(hit) or "kagent's module"))
    with InlineExtensions([{"key": key, "library": "/x.so", "op_namespace": "kagent_0", "functions": []}]) as p:
        module = exec_file(os.path.join(ANSWERS, answer), "candidate_load_error")
    assert torch_build == [] and len(bound) == 1
    assert p.records == [{"name": name, "built_by": "kagent", "reason": "", "seconds": p.records[0]["seconds"]}]
    assert cpp_extension.load_inline is before  # restored on exit
    del module


def test_multi_function_answer_builds_model_through_kagent(torch_build, monkeypatch):
    (key,) = static_keys("multi_function.py").values()
    monkeypatch.setattr(InlineExtensions, "_bind", staticmethod(lambda hit, n: "kagent's module"))
    with InlineExtensions([{"key": key, "library": "/x.so", "op_namespace": "kagent_0", "functions": []}]) as p:
        module = exec_file(os.path.join(ANSWERS, "multi_function.py"), "candidate_load_error")
        module.ModelNew(2.0, 1)  # load_inline runs in __init__
    assert [r["built_by"] for r in p.records] == ["kagent"] and torch_build == []


def test_a_call_kagent_did_not_build_goes_to_torch_with_its_reason(torch_build):
    with InlineExtensions([], {"dyn_ext": "cpp_sources is not a constant"}) as p:
        exec_file(os.path.join(ANSWERS, "dynamic_sources.py"), "candidate_load_error")
    by_name = {r["name"]: r for r in p.records}
    assert [b["name"] for b in torch_build] == ["dyn_ext", "own_bind", "kw_ext"]
    assert by_name["dyn_ext"] == {**by_name["dyn_ext"], "built_by": "torch", "reason": "cpp_sources is not a constant"}
    # own_bind and kw_ext: nothing kagent built matches their arguments (kw_ext was never
    # read statically; own_bind was, but no library for it was given here).
    assert "differ from what kagent read" in by_name["own_bind"]["reason"]
    assert "differ from what kagent read" in by_name["kw_ext"]["reason"]


def test_unknown_option_is_a_one_line_verdict(torch_build):
    with InlineExtensions([]):
        with pytest.raises(KagentError) as err:
            exec_file(os.path.join(ANSWERS, "unknown_option.py"), "candidate_load_error")
    assert err.value.kind == "load_inline_option"
    assert err.value.message == (f"load_inline() got an option torch {torch.__version__} does not know: "
                                 "extra_cuda_flags (did you mean extra_cuda_cflags?)")
    assert "\n" not in err.value.message and torch_build == []


def test_what_torch_cannot_build_raises_its_build_error_at_once(torch_build):
    module = 'torch::Tensor f(torch::Tensor x);\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("f", &f); }\n'
    with InlineExtensions([]) as ext:
        with pytest.raises(KagentError) as err:
            cpp_extension.load_inline("ext", module, functions=["f"])
    # A RuntimeError, as torch's is: the answer's own except (and its fallback) runs.
    assert isinstance(err.value, RuntimeError) and err.value.kind == "compile_error"
    assert "Error building extension 'ext'" in err.value.message and torch_build == []
    assert ext.records == [{"name": "ext", "built_by": "nobody", "seconds": 0.0,
                            "reason": err.value.message.split(": ", 1)[1]}]


def test_a_load_whose_own_code_failed_kagents_build_raises_that_error_at_once(torch_build):
    # CUDA-L1's l2_p75: CUDA written into a .cpp, load() in try/except. kagent's build failed in the
    # answer's own code (build_error); the answer meets the error at once, as a RuntimeError as
    # torch's is, and its own except falls back: no torch build (15-20 s of the worker's on the H200).
    (key,) = static_keys("cuda_in_cpp.py").values()
    error = "main.cpp:5:13: error: 'blockIdx' was not declared in this scope"
    with InlineExtensions([{"key": key, "library": "", "op_namespace": "", "functions": [], "build_error": error}],
                          {"scale_in_cpp": "kagent's build of the file it writes failed in its own code"}) as ext:
        module = exec_file(os.path.join(ANSWERS, "cuda_in_cpp.py"), "candidate_load_error")
    assert torch_build == [] and module.CUSTOM_KERNEL_AVAILABLE is False
    assert ext.records == [{"name": "scale_in_cpp", "built_by": "nobody", "seconds": ext.records[0]["seconds"],
                            "reason": "kagent's build of the file it writes failed in its own code"}]
    # Not caught by the answer: a compile_error naming the extension and the compiler's line.
    with InlineExtensions([{"key": key, "library": "", "op_namespace": "", "functions": [], "build_error": error}]):
        with pytest.raises(ExtensionBuildError) as err:
            cpp_extension.load(name="scale_in_cpp", sources=[os.path.join(module.folder, "scale_in_cpp.cpp")],
                               build_directory=module.folder, with_cuda=True)
    assert isinstance(err.value, RuntimeError) and err.value.kind == "compile_error"
    assert err.value.message == f"Error building extension 'scale_in_cpp': {error}"
    shutil.rmtree(module.folder)


def test_torchs_build_failure_is_a_compile_error_that_says_who_built(monkeypatch):
    @functools.wraps(cpp_extension.load_inline)
    def failing(*args, **kwargs):
        raise RuntimeError("Error building extension 'x'")
    monkeypatch.setattr(cpp_extension, "load_inline", failing)
    with InlineExtensions([], {"x": "SYCL sources"}):
        with pytest.raises(KagentError) as err:
            cpp_extension.load_inline("x", "s", functions=["f"])
    assert err.value.kind == "compile_error" and "because SYCL sources" in err.value.message


def test_the_gpu_timing_lock_is_let_go_while_torch_builds_and_taken_shared_again(monkeypatch, tmp_path):
    import fcntl
    lock_file = tmp_path / "GPU-x.timing"
    lock_file.write_text("")
    held = os.open(lock_file, os.O_RDONLY)  # the worker's descriptor, held shared by its request
    fcntl.flock(held, fcntl.LOCK_SH)
    seen = []

    def sibling_could_time():
        probe = os.open(lock_file, os.O_RDONLY)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(probe)

    @functools.wraps(cpp_extension.load_inline)
    def building(*args, **kwargs):
        seen.append(sibling_could_time())
        return "torch's module"
    monkeypatch.setattr(cpp_extension, "load_inline", building)
    try:
        with InlineExtensions([], {"x": "SYCL sources"}, gpu_lock_fd=held):
            assert cpp_extension.load_inline("x", "s", functions=["f"]) == "torch's module"
        assert seen == [True]  # a sibling could take it exclusively while torch built
        assert not sibling_could_time()  # shared again afterwards
    finally:
        os.close(held)
