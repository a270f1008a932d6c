import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Conv2d (3x3, stride 1, padding 1, with bias) -> ReLU -> MaxPool2d(2).
    Every step is well defined in training and eval mode alike (no batch statistics).
    """

    def __init__(self, in_channels, out_channels, kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): input of shape (batch_size, in_channels, height, width).
        Returns:
            torch.Tensor: shape (batch_size, out_channels, height // 2, width // 2).
        """
        x = self.conv(x)
        x = torch.relu(x)
        x = self.pool(x)
        return x


batch_size = 16
in_channels = 3
out_channels = 32
height = 256
width = 256
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
