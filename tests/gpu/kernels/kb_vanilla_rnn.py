import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# An honest VanillaRNN step (tests/gpu/problems/vanilla_rnn_small.py) that keeps the reference's
# hidden state the same way: self.hidden replaced on every call. Correct only when both sides
# start each compared call from the same state (docs/evaluation.md, "Stateful problems").
rnn_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

// new_hidden[b][h] = tanh(bias[h] + sum_i x[b][i] w[h][i] + sum_j hidden[b][j] w[h][in + j])
__global__ void i2h_kernel(const float* x, const float* hidden, const float* w, const float* bias,
                           float* new_hidden, int batch, int in, int hid) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= batch * hid) return;
    int b = idx / hid, h = idx % hid;
    const float* row = w + (size_t)h * (in + hid);
    float sum = bias[h];
    for (int i = 0; i < in; ++i) sum += x[b * in + i] * row[i];
    for (int j = 0; j < hid; ++j) sum += hidden[b * hid + j] * row[in + j];
    new_hidden[idx] = tanhf(sum);
}

// out[b][o] = bias[o] + sum_h hidden[b][h] w[o][h]
__global__ void h2o_kernel(const float* hidden, const float* w, const float* bias, float* out,
                           int batch, int hid, int outs) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= batch * outs) return;
    int b = idx / outs, o = idx % outs;
    float sum = bias[o];
    for (int h = 0; h < hid; ++h) sum += hidden[b * hid + h] * w[o * hid + h];
    out[idx] = sum;
}

std::vector<torch::Tensor> rnn_step_cuda(torch::Tensor x, torch::Tensor hidden, torch::Tensor w_ih,
                                         torch::Tensor b_ih, torch::Tensor w_ho, torch::Tensor b_ho) {
    x = x.contiguous(); hidden = hidden.contiguous();
    int batch = x.size(0), in = x.size(1), hid = hidden.size(1), outs = w_ho.size(0);
    auto new_hidden = torch::empty({batch, hid}, x.options());
    auto out = torch::empty({batch, outs}, x.options());
    const int block = 128;
    i2h_kernel<<<(batch * hid + block - 1) / block, block>>>(
        x.data_ptr<float>(), hidden.data_ptr<float>(), w_ih.data_ptr<float>(), b_ih.data_ptr<float>(),
        new_hidden.data_ptr<float>(), batch, in, hid);
    h2o_kernel<<<(batch * outs + block - 1) / block, block>>>(
        new_hidden.data_ptr<float>(), w_ho.data_ptr<float>(), b_ho.data_ptr<float>(), out.data_ptr<float>(),
        batch, hid, outs);
    return {out, new_hidden};
}
"""

rnn_cpp_source = (
    "std::vector<torch::Tensor> rnn_step_cuda(torch::Tensor x, torch::Tensor hidden, torch::Tensor w_ih, "
    "torch::Tensor b_ih, torch::Tensor w_ho, torch::Tensor b_ho);"
)

rnn = load_inline(
    name="kagent_test_kb_vanilla_rnn",
    cpp_sources=rnn_cpp_source,
    cuda_sources=rnn_source,
    functions=["rnn_step_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.rnn = rnn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.hidden = self.hidden.to(x.device)
        out, self.hidden = self.rnn.rnn_step_cuda(x, self.hidden, self.i2h.weight, self.i2h.bias,
                                                  self.h2o.weight, self.h2o.bias)
        return out
