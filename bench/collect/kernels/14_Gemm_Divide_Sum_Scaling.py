# sum_h (x @ W.T)[b, h] / 2 * s = s / 2 * x[b, :] . colsum(W): two Triton kernels (the column
# sums of W, then one dot product per row of x) instead of a GEMM.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def column_sums(w_ptr, out_ptr, rows, cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for r0 in range(0, rows, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        mask = (r[:, None] < rows) & (c[None, :] < cols)
        w = tl.load(w_ptr + r[:, None].to(tl.int64) * cols + c[None, :], mask=mask, other=0.0)
        acc += tl.sum(w, axis=0)
    tl.store(out_ptr + c, acc, mask=c < cols)


@triton.jit
def scaled_row_dots(x_ptr, v_ptr, out_ptr, cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        mask = c < cols
        acc += tl.load(x_ptr + row * cols + c, mask=mask, other=0.0) * tl.load(v_ptr + c, mask=mask, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0) * scale)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = x.contiguous()
        w = self.weight.contiguous()
        hidden, cols = w.shape
        v = torch.empty(cols, device=x.device, dtype=torch.float32)
        column_sums[(triton.cdiv(cols, 128),)](w, v, hidden, cols, BLOCK_R=32, BLOCK_C=128)
        out = torch.empty(x.shape[0], 1, device=x.device, dtype=x.dtype)
        scaled_row_dots[(x.shape[0],)](x, v, out, cols, self.scaling_factor / 2.0, BLOCK=1024)
        return out
