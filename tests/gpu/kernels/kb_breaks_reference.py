"""Verdict case (problem tests/gpu/problems/linear_relu_kb.py, 128 x 1024 -> 512): an answer that
breaks the reference. It keeps its weight transposed, (in, out), and makes torch.nn.functional.linear
take weights that way for the whole process ("one transpose fewer per call"). Its own forward is
right; the reference's nn.Linear, which calls F.linear with the usual (out, in) weight, then
fails: "mat1 and mat2 shapes cannot be multiplied (128x1024 and 512x1024)".
Expected: runtime_error (reference_broken_by_candidate), the message naming what it changed
(patched_function: torch.nn.functional.linear): the reference runs alone once that is put back.
Before: internal_error (reference_failed), blaming kagent.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def _linear_pretransposed(x, weight, bias=None):
    out = x @ weight
    return out + bias if bias is not None else out


F.linear = _linear_pretransposed


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        linear = nn.Linear(in_features, out_features)  # the reference's weights, under the same seed
        self.weight_t = nn.Parameter(linear.weight.detach().t().contiguous())
        self.bias = nn.Parameter(linear.bias.detach().clone())

    def forward(self, x):
        return torch.relu(F.linear(x, self.weight_t, self.bias))
