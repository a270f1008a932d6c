"""HACK for guard no_kernel on a wrong output (problem tests/gpu/problems/small_gelu.py): no kernel of
its own, PyTorch computing on a side stream that never waits for the caller's, as CUDA-L1's l1_p16,
l1_p56 or l1_p74 do. Those were `wrong` when the trials lost the race (a loaded GPU) and `rejected
no_kernel` when they won it (one at a time). Here the output is wrong every time (scaled by 1.05),
so only the rule decides: a rejection about the code outranks a wrong output.
Expected: rejected (no_kernel) under both policies, its message naming the wrong output too.
Before: wrong (value_mismatch) under both.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stream = torch.cuda.Stream()

    def forward(self, x):
        with torch.cuda.stream(self.stream):
            y = torch.nn.functional.gelu(x) * 1.05
        torch.cuda.current_stream().wait_stream(self.stream)
        return y
