import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Conv2d(3x3, padding 1) -> ReLU -> MaxPool2d(2) with odd spatial sizes (floor pooling drops
    the last row/column), channel counts that are not multiples of the kernel's blocking, and
    a spatial size that is not a multiple of the tile.
    """

    def __init__(self, in_channels, out_channels, kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.relu(self.conv(x)))


batch_size = 3
in_channels = 5
out_channels = 12
height = 37
width = 41
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
