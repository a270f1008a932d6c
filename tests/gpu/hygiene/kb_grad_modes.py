# Hygiene culprit (grad and autograd modes): forward turns on anomaly detection and
# deterministic algorithms, and grad mode (which kagent's own no-grad scope puts back). Expected:
# left_behind torch.is_anomaly_enabled() and torch.are_deterministic_algorithms_enabled()
# (restored); the next evaluation unaffected.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        y = F.gelu(x)
        torch.set_grad_enabled(True)
        torch.autograd.set_detect_anomaly(True)
        torch.use_deterministic_algorithms(True)
        return y
