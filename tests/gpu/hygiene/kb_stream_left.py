# Hygiene culprit (streams): forward makes a stream of its own current and leaves it so.
# Expected: left_behind torch.cuda.current_stream() (restored); the next evaluation unaffected.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        y = F.gelu(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        torch.cuda.set_stream(side)
        return y
