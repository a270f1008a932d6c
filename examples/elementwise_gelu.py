import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Elementwise GELU (exact, erf form): y = 0.5 * x * (1 + erf(x / sqrt(2))).
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): input of any shape.
        Returns:
            torch.Tensor: GELU(x), same shape as x.
        """
        return torch.nn.functional.gelu(x)


batch_size = 4096
dim = 8192


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
