# Hygiene culprit (CPU and CUDA generators): forward reseeds both generators and draws from
# them. Expected: nothing named (the generators are put back after every evaluation, silently:
# kagent's own seeding moves them too); the next evaluation unaffected.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        torch.manual_seed(12345)
        torch.rand(1000)
        torch.rand(1000, device=x.device)
        return F.gelu(x)
