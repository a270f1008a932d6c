import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Linear + ReLU with sizes that are multiples of 4 but not of the tile sizes
    (exercises vector loads with a partial K slice and a partial last column tile).
    """

    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


batch_size = 129
in_features = 260
out_features = 132


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
