import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A linear layer (nn.Linear: weights from kaiming_uniform_) followed by ReLU: the shape of
    many KernelBench level-2 problems, whose answers often re-create the weights themselves.
    """

    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


batch_size = 128
in_features = 1024
out_features = 512


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
