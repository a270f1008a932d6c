# The clean-worker probe of the hygiene suite (small_gelu): forward first checks the process
# state every evaluation relies on, raising with what it found changed; then it returns exact
# GELU through PyTorch (evaluated with the guards off, its verdict is `correct` in a clean
# worker). Run after each candidate of manifest.json in the same worker.
import os
import threading

import torch
import torch.nn as nn
import torch.nn.functional as F


def _dirty():
    found = []
    if os.getcwd() == "/":
        found.append("the working directory is / (not the scratch folder)")
    if F.gelu is not torch._C._nn.gelu:
        found.append("torch.nn.functional.gelu replaced")
    if torch.get_default_dtype() != torch.float32:
        found.append(f"default dtype {torch.get_default_dtype()}")
    if torch.get_default_device().type != "cpu":
        found.append(f"default device {torch.get_default_device()}")
    if torch.is_anomaly_enabled() or torch.are_deterministic_algorithms_enabled():
        found.append("anomaly or deterministic mode on")
    if torch.backends.cudnn.benchmark or torch.backends.cuda.matmul.allow_tf32:
        found.append("cudnn.benchmark or matmul TF32 on")
    if not torch.backends.cuda.flash_sdp_enabled():
        found.append("flash attention off")
    if torch.cuda.current_stream() != torch.cuda.default_stream():
        found.append("a side stream is current")
    if torch._C._len_torch_function_stack() != 0:
        found.append("a torch function mode is active")
    fraction = torch.cuda.get_per_process_memory_fraction()
    if 0 < fraction < 0.999:  # unset reads 1 (or 0 where the allocator keeps no limit)
        found.append(f"memory fraction {fraction}")
    if torch.cuda.is_current_stream_capturing():
        found.append("a capture is in progress")
    if any(t.name.startswith("hygiene-") for t in threading.enumerate()):
        found.append("a culprit's thread runs")
    try:
        torch.rand(1, device="cuda")  # the CUDA generator must draw (not left in graph-capture mode)
    except RuntimeError as exc:
        found.append(f"CUDA generator: {exc}")
    return found


class ModelNew(nn.Module):
    def forward(self, x):
        found = _dirty()
        if found:
            raise RuntimeError("the worker is not clean: " + "; ".join(found))
        return F.gelu(x)
