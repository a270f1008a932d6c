"""The precision guard's Python side (kagent_worker/precision.py): the fp64 truth, the
rounding hypotheses, and the inputs it measures on, cut to a byte budget that counts outputs."""


import torch

from kagent_worker.precision import precision_inputs, reference_fp64, round_mantissa


def test_reference_fp64_runs_the_model_in_double():
    model = torch.nn.Linear(4, 2)
    out = reference_fp64(model, [torch.randn(3, 4)])
    assert isinstance(out, list) and out[0].dtype == torch.float64
    assert model.weight.dtype == torch.float32  # the model itself is untouched


def test_reference_fp64_says_why_when_the_model_casts():
    class Casts(torch.nn.Module):
        def forward(self, x):
            return x.float()
    assert "float32" in reference_fp64(Casts(), [torch.randn(2)])


def test_round_mantissa_keeps_the_named_bits():
    x = torch.tensor([1.0 + 2 ** -12, 1.0 + 2 ** -9], dtype=torch.float32)
    assert round_mantissa(x, "tf32").tolist() == [1.0, 1.0 + 2 ** -9]  # 10 bits kept
    assert round_mantissa(x, "bfloat16").tolist() == [1.0, 1.0]         # 7 bits kept


class _Problem:
    """The part of kagent_worker.problem.Problem precision_inputs uses."""

    def __init__(self, make):
        self.make = make

    def make_inputs(self, device, seed):
        torch.manual_seed(seed)
        return self.make()


def test_inputs_within_budget_are_kept_whole_with_random_signs():
    problem = _Problem(lambda: [torch.rand(64, 32)])
    inputs, note = precision_inputs(problem, torch.nn.Identity(), "cpu", 7, 1 << 20)
    assert inputs[0].shape == (64, 32)
    assert (inputs[0] < 0).any() and (inputs[0] > 0).any()
    assert note == "signs drawn at random"


def test_large_inputs_are_cut_along_the_leading_dimension():
    problem = _Problem(lambda: [torch.rand(1024, 256)])  # 1 MiB in, 1 MiB out
    inputs, note = precision_inputs(problem, torch.nn.Identity(), "cpu", 7, 256 << 10)
    assert inputs[0].shape[0] <= 128 and inputs[0].shape[1] == 256
    assert "inputs cut from 1024 to" in note


def test_small_inputs_with_a_large_output_are_cut_too():
    # A small-K matmul: 2 x 32 KiB of inputs make a 4 MiB output.
    class Matmul(torch.nn.Module):
        def forward(self, a, b):
            return a @ b
    problem = _Problem(lambda: [torch.rand(1024, 8), torch.rand(8, 1024)])
    inputs, note = precision_inputs(problem, Matmul(), "cpu", 7, 512 << 10)
    a, b = inputs
    assert b.shape == (8, 1024)  # its leading size is not the lead's: untouched
    assert a.shape[1] == 8 and a.shape[0] * 1024 * 4 <= 512 << 10
    assert "inputs cut from 1024 to" in note


def test_plain_inputs_where_signs_make_the_reference_non_finite():
    class Log(torch.nn.Module):
        def forward(self, x):
            return torch.log(x)
    problem = _Problem(lambda: [torch.rand(16, 16) + 0.1])
    inputs, note = precision_inputs(problem, Log(), "cpu", 7, 1 << 20)
    assert (inputs[0] > 0).all()
    assert "plain inputs" in note
