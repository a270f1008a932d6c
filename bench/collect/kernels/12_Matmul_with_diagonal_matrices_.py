# diag(A) @ B as one Triton kernel: C[i, j] = A[i] * B[i, j], no N x N matrix.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def diag_scale_rows(a_ptr, b_ptr, c_ptr, n_cols, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    b = tl.load(b_ptr + offs, mask=mask)
    a = tl.load(a_ptr + offs // n_cols, mask=mask)
    tl.store(c_ptr + offs, a * b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A = A.contiguous()
        B = B.contiguous()
        C = torch.empty_like(B)
        numel = B.numel()
        BLOCK = 1024
        diag_scale_rows[(triton.cdiv(numel, BLOCK),)](A, B, C, B.shape[1], numel, BLOCK=BLOCK)
        return C
