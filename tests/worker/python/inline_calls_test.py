"""The static reading of load_inline calls (kagent_worker/inline_calls.py): realistic
KernelBench answers in answers/, constant folding, the fallback reasons, and the key the
worker's patched load_inline must find again at run time."""

import inspect
import json
import os
import subprocess
import sys

import pytest
import torch.utils.cpp_extension as cpp_extension

from kagent_worker import inline_calls

ANSWERS = os.path.join(os.path.dirname(__file__), "answers")
MODULE = inline_calls.__file__


def read(name):
    with open(os.path.join(ANSWERS, name)) as f:
        return inline_calls.extract_calls(f.read())


def test_parameter_lists_are_torchs():
    assert inline_calls.LOAD_INLINE_PARAMS == list(inspect.signature(cpp_extension.load_inline).parameters)
    assert inline_calls.LOAD_PARAMS == list(inspect.signature(cpp_extension.load).parameters)


def test_kernelbench_example_answer():
    (call,) = read("elementwise_add.py")
    assert call["ok"] and call["name"] == "elementwise_add" and call["line"] > 30
    c = call["call"]
    assert c["functions"] == ["elementwise_add_cuda"]
    assert c["cpp_sources"] == ["torch::Tensor elementwise_add_cuda(torch::Tensor a, torch::Tensor b);"]
    assert "__global__ void elementwise_add_kernel" in c["cuda_sources"][0]
    assert c["extra_cflags"] == [""] and c["extra_cuda_cflags"] == []
    assert "verbose" not in c  # changes nothing kagent builds
    assert call["key"] == inline_calls.call_key(c)


def test_folding_fstrings_dedent_concatenation_aliases_and_positional_arguments():
    (call,) = read("multi_function.py")
    assert call["ok"], call.get("reason")
    c = call["call"]
    assert c["name"] == "scale_shift_ext"
    assert c["functions"] == ["scale_shift", "split_half"]
    assert c["extra_cuda_cflags"] == ["-O3", "--use_fast_math"]  # += on a module-level list
    src = c["cuda_sources"][0]
    assert src.startswith("#include <torch/extension.h>\n\n__global__ void scale_shift_kernel(")
    assert "(int64_t)256" in src and "{{" not in src
    assert c["cpp_sources"][0].startswith("torch::Tensor scale_shift(torch::Tensor x, double scale")


def test_fallback_reasons():
    calls = {c["name"]: c for c in read("dynamic_sources.py")}
    assert not calls["dyn_ext"]["ok"] and "cpp_sources is not a constant" in calls["dyn_ext"]["reason"]
    # No functions=: the answer's own PYBIND11_MODULE says what to bind.
    assert calls["own_bind"]["ok"] and calls["own_bind"]["call"]["functions"] == ["twice"]
    kw = [c for c in read("dynamic_sources.py") if c["name"] is None]
    assert len(kw) == 1 and "**kwargs" in kw[0]["reason"]


@pytest.mark.parametrize("text, reason", [
    ("from torch.utils.cpp_extension import load\nm = load(name='x', sources=['a.cu'])", "load() builds source files"),
    ("import torch\nm = torch.utils.cpp_extension.load_inline('x', 's', functions=['f'], is_python_module=False)",
     "is_python_module=False"),
    ("from torch.utils.cpp_extension import load_inline as li\nm = li('x', 's', sycl_sources='k', functions=['f'])",
     "SYCL"),
    ("from torch.utils.cpp_extension import load_inline\nm = load_inline('x', 's', functions=['f', 'not-a-name'])",
     "not an identifier"),
    ("from torch.utils import cpp_extension\nm = cpp_extension.load_inline('x', open('f').read(), functions=['f'])",
     "not a constant"),
])
def test_each_unsupported_call_says_why(text, reason):
    (call,) = inline_calls.extract_calls(text)
    assert not call["ok"] and reason in call["reason"], call


def test_a_load_of_a_file_the_answer_writes_from_a_constant_is_read_as_load_inline_without_headers():
    # CUDA-L1's l1_p26 and l2_p75: torch built them in the worker, 52 s and 18 s on the H200.
    (call,) = read("written_then_loaded.py")
    assert call["ok"], call.get("reason")
    c = call["call"]
    assert call["kind"] == "load" and c["name"] == "scale_ext" and c["no_implicit_headers"] is True
    assert c["cuda_sources"][0].lstrip().startswith("#include <torch/extension.h>") and "scale_kernel" in c["cuda_sources"][0]
    # kagent binds in main.cpp: the declaration is the .cu's own definition's head.
    assert c["cpp_sources"] == ["#include <torch/extension.h>\ntorch::Tensor scale_cuda(torch::Tensor x, double s);\n"]
    assert c["functions"] == ["scale=scale_cuda"]
    # At run time the same call, its file read back, has the same key.
    runtime = inline_calls.normalize("load", {"name": "scale_ext", "verbose": False, "build_directory": "/tmp/x",
                                              "sources": [(".cu", c["cuda_sources"][0])]})
    assert inline_calls.call_key(runtime) == call["key"]


OWN_TYPE = ('S = """struct P {int a;};\ntorch::Tensor f(P p) { return {}; }\n'
            'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("f", &f); }"""\n')


@pytest.mark.parametrize("text, reason", [
    # the path written differs from the one loaded
    ("import os\nfrom torch.utils.cpp_extension import load\nd = os.getcwd()\n"
     "with open(os.path.join(d, 'a.cu'), 'w') as f:\n    f.write('x')\nm = load(name='x', sources=[os.path.join(d, 'b.cu')])",
     "writes it from a constant"),
    # text that is not a constant
    ("from torch.utils.cpp_extension import load\nwith open('/tmp/a.cu', 'w') as f:\n    f.write(open('k').read())\n"
     "m = load(name='x', sources=['/tmp/a.cu'])", "writes it from a constant"),
    # opened for reading
    ("from torch.utils.cpp_extension import load\nwith open('/tmp/a.cu') as f:\n    f.write('x')\n"
     "m = load(name='x', sources=['/tmp/a.cu'])", "writes it from a constant"),
    # a signature kagent will not declare (a type of the answer's own)
    ("from torch.utils.cpp_extension import load\n" + OWN_TYPE +
     "with open('/tmp/a.cu', 'w') as f:\n    f.write(S)\nm = load(name='x', sources=['/tmp/a.cu'])",
     "names a type kagent does not declare"),
    # two CUDA files: load_inline writes one
    ("from torch.utils.cpp_extension import load\n"
     "with open('/tmp/a.cu', 'w') as f:\n    f.write('x')\nwith open('/tmp/b.cu', 'w') as f:\n    f.write('y')\n"
     "m = load(name='x', sources=['/tmp/a.cu', '/tmp/b.cu'])", "kagent builds one of each"),
])
def test_each_load_kagent_does_not_build_says_why(text, reason):
    (call,) = inline_calls.extract_calls(text)
    assert not call["ok"] and reason in call["reason"], call


def test_a_source_file_that_cannot_be_read_at_run_time_is_torchs(tmp_path):
    with pytest.raises(inline_calls.Unsupported, match="cannot be read"):
        inline_calls.read_source_files([str(tmp_path / "gone.cu")])
    (tmp_path / "k.cu").write_text("text")
    assert inline_calls.read_source_files(str(tmp_path / "k.cu")) == [(".cu", "text")]


def test_an_own_pybind_module_is_read_when_it_binds_plain_functions():
    module = ('PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n'
              '  m.def("forward", &forward_cuda, "the forward pass");  // renamed\n'
              '  m.def("scale", scale);\n}\n')
    assert inline_calls.pybind_module_functions(["int x;", module]) == {"forward": "forward_cuda", "scale": "scale"}
    norm = inline_calls.normalize("load_inline", {"name": "e", "cpp_sources": module})
    assert norm["functions"] == ["forward=forward_cuda", "scale"]
    for body, words in [('m.def("f", &f, py::arg("x") = 1);', "more than plain functions"),
                        ('m.def("f", [](int x) { return x; });', "more than plain functions"),
                        ("", "no PYBIND11_MODULE kagent can read")]:
        with pytest.raises(inline_calls.Unsupported, match=words):
            inline_calls.pybind_module_functions([f"PYBIND11_MODULE(n, m) {{ {body} }}"])


def test_functions_beside_an_own_pybind_module_is_what_torch_cannot_build():
    # torch adds its own PYBIND11_MODULE for functions=: two modules, and its build fails (CUDA-L1's
    # l2_p27: kagent bound it and ran kernels torch never builds). A module in a comment is no module.
    module = 'torch::Tensor f(torch::Tensor x);\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("f", &f); }\n'
    for where in ("cpp_sources", "cuda_sources"):
        with pytest.raises(inline_calls.TorchBuildFails, match="PyInit_ext defined twice"):
            inline_calls.normalize("load_inline", {"name": "ext", "cpp_sources": "", where: module, "functions": ["f"]})
    text = f"from torch.utils.cpp_extension import load_inline\nm = load_inline('ext', {module!r}, functions=['f'])"
    (call,) = inline_calls.extract_calls(text)
    assert not call["ok"] and "define their own PYBIND11_MODULE" in call["reason"]
    # No functions=, and a module in each source: the link of torch's two objects fails (CUDA-L1's l1_p38).
    with pytest.raises(inline_calls.TorchBuildFails, match="2 PYBIND11_MODULE blocks"):
        inline_calls.normalize("load_inline", {"name": "ext", "cpp_sources": module, "cuda_sources": module})
    commented = "// PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"f\", &f); }\ntorch::Tensor f(torch::Tensor x);"
    assert inline_calls.normalize("load_inline", {"name": "ext", "cpp_sources": commented, "functions": ["f"]})


def test_unknown_option_is_named():
    (call,) = read("unknown_option.py")
    assert not call["ok"] and call["unknown_option"] == "extra_cuda_flags"
    assert call["reason"] == "unknown option extra_cuda_flags"


def test_other_functions_named_load_inline_are_not_torchs():
    text = "def load_inline(**k):\n    return k\nm = load_inline(name='x', cpp_sources='s', functions=['f'])\n"
    assert inline_calls.extract_calls(text) == []


def test_names_reassigned_later_are_read_where_the_call_is():
    text = ("from torch.utils.cpp_extension import load_inline\nsrc = 'a'\n"
            "m = load_inline('x', src, functions=['f'])\nsrc = 'b'\n")
    (call,) = inline_calls.extract_calls(text)
    assert call["call"]["cpp_sources"] == ["a"]


def test_script_mode_as_the_orchestrator_runs_it(tmp_path):
    out = subprocess.run([sys.executable, "-I", "-S", MODULE, os.path.join(ANSWERS, "elementwise_add.py")],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["calls"][0]["name"] == "elementwise_add"
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    out = json.loads(subprocess.run([sys.executable, "-I", "-S", MODULE, str(bad)], capture_output=True,
                                    text=True, check=True).stdout)
    assert out["error"].startswith("SyntaxError")
