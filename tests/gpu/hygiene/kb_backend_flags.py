# Hygiene culprit (torch.backends flags): forward turns on cudnn.benchmark and TF32 matmuls and
# turns flash attention off. Expected: left_behind torch.backends.cuda.matmul.allow_tf32,
# torch.backends.cuda.flash_sdp_enabled() (restored); the guards reject it (torch_patched:
# precision settings) and put cudnn.benchmark back themselves (their cudnn_benchmark finding);
# the next evaluation unaffected.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        y = F.gelu(x)
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cuda.enable_flash_sdp(False)
        return y
