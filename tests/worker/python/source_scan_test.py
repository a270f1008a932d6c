"""Static findings on a KernelBench-format answer."""

from kagent_worker.source_scan import scan_kernelbench_source

HEAD = ("import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
        "ext = load_inline(name='x', cpp_sources='', functions=['op'])\n\n"
        "class ModelNew(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.ext = ext\n\n"
        "    def forward(self, x):\n")


def names(source):
    return {f["name"]: f["action"] for f in scan_kernelbench_source(source)}


def test_own_extension_only_is_clean():
    assert names(HEAD + "        return self.ext.op(x)\n") == {}


def test_pytorch_compute_in_forward_is_flagged():
    assert names(HEAD + "        return torch.relu(self.ext.op(x))\n") == {"torch_ops_in_forward": "flag"}


def test_an_except_handler_that_falls_back_to_pytorch_is_rejected():
    body = "        try:\n            return self.ext.op(x)\n        except Exception:\n            return torch.relu(x)\n"
    found = names(HEAD + body)
    assert found["try_except_fallback"] == "reject"


def test_threads_are_rejected():
    assert names("import threading\n" + HEAD + "        return self.ext.op(x)\n")["threads"] == "reject"


def test_unparsable_source_has_no_findings():
    assert scan_kernelbench_source("def (:") == []
