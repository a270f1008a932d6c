import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A linear layer (x @ W^T + b) followed by ReLU.
    """

    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): input of shape (batch_size, in_features).
        Returns:
            torch.Tensor: relu(linear(x)), shape (batch_size, out_features).
        """
        x = self.linear(x)
        x = torch.relu(x)
        return x


batch_size = 1024
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
