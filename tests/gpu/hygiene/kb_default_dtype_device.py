# Hygiene culprit (default dtype and device): forward computes GELU, then sets float64 and CUDA
# as the defaults. Expected: left_behind torch.get_default_dtype() and torch.get_default_device()
# (restored); the next evaluation unaffected.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        y = F.gelu(x)
        torch.set_default_dtype(torch.float64)
        torch.set_default_device("cuda")
        return y
