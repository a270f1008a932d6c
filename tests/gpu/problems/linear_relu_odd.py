import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Linear + ReLU with sizes that are multiples of neither the tile sizes nor 4
    (exercises edge tiles, scalar loads and scalar stores).
    """

    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


batch_size = 200
in_features = 517
out_features = 301


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
