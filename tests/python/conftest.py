"""A real `kagent serve --compile-only` on loopback for the adapter tests (one per session),
over a suite of tiny problems, with a bearer token. KAGENT_BINARY names the kagent to run."""

import json
import os
import signal
import subprocess
import time
import urllib.request

import pytest

TOKEN = "adapter-token"


def tiny_problem(expr):
    return ("import torch\nimport torch.nn as nn\n\n"
            "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
            f"    def forward(self, x):\n        return {expr}\n\n"
            "def get_inputs():\n    return [torch.randn(4096)]\n\n"
            "def get_init_inputs():\n    return []\n")


def kernel_answer(body, compiles=True):
    return ("Here is a kernel.\n\n```cuda\n#include <ATen/ATen.h>\n\n"
            "__global__ void k(const float* x, float* y, int64_t n) {\n"
            "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
            f"  if (i < n) {{ float v = x[i]; y[i] = {body}; }}\n}}\n\n"
            "at::Tensor forward(at::Tensor x) {\n  at::Tensor y = at::empty_like(x);\n  int64_t n = x.numel();\n"
            + ("" if compiles else "  undeclared_thing(n);\n") +
            "  k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n  return y;\n}\n```\n")


GOOD = kernel_answer("v > 0.f ? v : 0.f")
BROKEN = kernel_answer("v", compiles=False)
NO_CODE = "I would rather explain it."


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    binary = os.environ.get("KAGENT_BINARY")
    if not binary or not os.path.exists(binary):
        pytest.skip("KAGENT_BINARY does not name a built kagent")
    root = tmp_path_factory.mktemp("kagent-serve-py")
    (root / "suite/level1").mkdir(parents=True)
    (root / "suite/level1/1_relu.py").write_text(tiny_problem("torch.relu(x)"))
    (root / "suite/level1/2_double.py").write_text(tiny_problem("x * 2"))
    env = dict(os.environ, KAGENT_CACHE_DIR=str(root / "cache"), HOME=str(root))
    log = open(root / "serve.log", "w")
    proc = subprocess.Popen([binary, "serve", "--data", str(root / "data"), "--problems", str(root / "suite"), "--port", "0",
                             "--compile-only", "--token", TOKEN], stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    try:
        url = None
        for _ in range(1200):
            if proc.poll() is not None:
                raise RuntimeError("kagent serve exited: " + (root / "serve.log").read_text())
            info = root / "data/server.json"
            if url is None and info.exists():
                url = f"http://127.0.0.1:{json.loads(info.read_text())['port']}"
            if url:
                try:
                    with urllib.request.urlopen(url + "/health", timeout=5) as r:
                        if r.status == 200:
                            break
                except Exception:
                    pass
            time.sleep(0.2)
        else:
            raise RuntimeError("kagent serve did not become ready: " + (root / "serve.log").read_text())
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()
