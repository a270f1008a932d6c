// The smallest KernelBench problem the `kagent eval` tests use: relu of a 64 x 64 input, no
// parameters (its spec derives in a second).
#pragma once

namespace kagent::test {

inline constexpr const char* kReluProblem = R"py(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
)py";

}  // namespace kagent::test
