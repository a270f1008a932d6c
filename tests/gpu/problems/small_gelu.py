import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Small elementwise GELU (exact, erf form) for fast GPU verdict tests.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x)


batch_size = 512
dim = 1024


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
