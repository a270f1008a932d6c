import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A reference that does the same GELU 50 times and keeps the last result: eager pays 50
    kernel launches, a candidate computing it once is legitimately 10x+ faster. The
    excessive-speedup flag must fire (for a person to look) without rejecting it.
    """

    def __init__(self):
        super(Model, self).__init__()
        self.repeats = 50

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(self.repeats):
            y = torch.nn.functional.gelu(x)
        return y


batch_size = 512
dim = 1024


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
