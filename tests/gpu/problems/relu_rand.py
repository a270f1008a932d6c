import torch
import torch.nn as nn


class Model(nn.Module):
    """
    ReLU of uniform [0, 1) inputs (torch.rand, as many KernelBench problems draw them): on this
    data ReLU is the identity, which an aliasing candidate exploits by returning its input.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 512
dim = 1024


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
