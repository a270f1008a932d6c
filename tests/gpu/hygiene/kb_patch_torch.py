# Hygiene culprit (patched torch functions): forward computes GELU, then replaces
# torch.nn.functional.gelu with the identity (a later reference would compare against it).
# Expected: left_behind patched_function (restored); the guards reject it (torch_patched); the
# next evaluation (whose reference and answer call F.gelu) unaffected.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        y = F.gelu(x)
        torch.nn.functional.gelu = lambda t, approximate="none": t
        return y
