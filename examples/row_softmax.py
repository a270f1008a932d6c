import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Softmax over the last dimension of a 2-D tensor (one softmax per row).
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): input of shape (batch_size, dim).
        Returns:
            torch.Tensor: softmax(x, dim=1), same shape as x.
        """
        return torch.softmax(x, dim=1)


batch_size = 2048
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
