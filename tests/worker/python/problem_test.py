"""Problems and candidates: loading, errors with their kinds, specs, inputs by seed."""

import gc
import os

import pytest
import torch

from conftest import KERNELBENCH
from kagent_worker.loading import KagentError
from kagent_worker.problem import derive_spec, load_kernelbench_candidate, open_problem

GELU = """
import torch
class Model(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.linear = torch.nn.Linear(8, 4)
    def forward(self, x, n: int):
        return torch.nn.functional.gelu(self.linear(x)) * self.scale, x.sum()
batch = 3
def get_inputs():
    return [torch.randn(batch, 8), 2]
def get_init_inputs():
    return [0.5]
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_spec_of_a_small_problem(tmp_path):
    spec = derive_spec(open_problem(write(tmp_path, "p.py", GELU)))
    assert spec["name"] == "p"
    assert [(i["name"], i["kind"], i["shape"]) for i in spec["inputs"]] == [("x", "tensor", [3, 8]), ("n", "int", [])]
    assert [p["name"] for p in spec["params"]] == ["linear.weight", "linear.bias"]
    assert spec["params"][0]["cpp_name"] == "linear_weight"
    assert spec["output_is_tuple"] and [o["shape"] for o in spec["outputs"]] == [[3, 4], []]
    assert len(spec["sha256"]) == 64


def test_inputs_and_models_are_reproducible_by_seed(tmp_path):
    problem = open_problem(write(tmp_path, "p.py", GELU))
    a, b, c = problem.make_inputs("cpu", 7), problem.make_inputs("cpu", 7), problem.make_inputs("cpu", 8)
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])
    m1, m2 = problem.make_model("cpu", 3), problem.make_model("cpu", 3)
    assert torch.equal(m1.linear.weight, m2.linear.weight)


@pytest.mark.parametrize("text, kind, words", [
    ("def broken(:\n", "problem_load_error", "SyntaxError"),
    ("import torch\nraise RuntimeError('boom')\n", "problem_load_error", "boom"),
    ("import torch\nclass Model(torch.nn.Module):\n  pass\ndef get_init_inputs(): return []\n", "problem_incomplete",
     "get_inputs"),
])
def test_problem_errors_carry_a_kind(tmp_path, text, kind, words):
    with pytest.raises(KagentError) as err:
        open_problem(write(tmp_path, "bad.py", text))
    assert err.value.kind == kind and words in err.value.message


def test_missing_file():
    with pytest.raises(KagentError) as err:
        open_problem("/nonexistent/problem.py")
    assert err.value.kind == "file_not_found"


def test_a_kernelbench_candidate_gets_the_reference_weights(tmp_path):
    problem = open_problem(write(tmp_path, "p.py", GELU))
    cand = write(tmp_path, "c.py", GELU.replace("class Model(", "class ModelNew("))
    model_new, calls = load_kernelbench_candidate(cand, problem, "cpu", seed=5)
    assert calls == []
    assert torch.equal(model_new.linear.weight, problem.make_model("cpu", 5).linear.weight)
    with pytest.raises(KagentError) as err:
        load_kernelbench_candidate(write(tmp_path, "none.py", "x = 1\n"), problem, "cpu")
    assert err.value.kind == "invalid"


@pytest.mark.skipif(not os.path.isdir(KERNELBENCH), reason=f"KernelBench problems not found at {KERNELBENCH}")
@pytest.mark.parametrize("path", ["level1/19_ReLU.py", "level1/1_Square_matrix_multiplication_.py",
                                  "level2/76_Gemm_Add_ReLU.py"])
def test_kernelbench_specs_at_official_sizes_on_meta_tensors(path):
    spec = derive_spec(open_problem(os.path.join(KERNELBENCH, path)))
    assert spec["level"] == int(path[5])
    assert spec["outputs"] and all(o["shape"] for o in spec["outputs"])


# -- construction as KernelBench's harness does it (issue 25) --

COUNTED = """
import torch
builds = [0]
class Model(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        builds[0] += 1
        self.linear = torch.nn.Linear(n, 3)
    def forward(self, x):
        return self.linear(x)
def get_inputs():
    return [torch.randn(2, 4)]
def get_init_inputs():
    return [4]
"""


# Counts the CPU draws of get_inputs (appended to COUNTED with get_inputs calling draw()).
DRAW_COUNTER = """
draws = [0]
def draw():
    draws[0] += 1
    return torch.randn(2, 4)
"""


def test_trial_seeds_are_kernelbenchs():
    # KernelBench's run_and_check_correctness: torch.manual_seed(42), then one
    # torch.randint(0, 2**32 - 1, (1,)) per trial (values of torch's CPU generator).
    problem_seeds = __import__("kagent_worker.problem", fromlist=["trial_seeds"]).trial_seeds
    assert problem_seeds(42, 5) == [734796314, 576165995, 2197670066, 839703249, 2584932063]
    assert problem_seeds(42, 2) == [734796314, 576165995]


def test_kernelbench_inputs_are_drawn_on_the_cpu_under_the_seed(tmp_path):
    problem = open_problem(write(tmp_path, "p.py", GELU))
    torch.manual_seed(734796314)
    expected = torch.randn(3, 8)
    got = problem.kernelbench_inputs("cpu", 734796314)
    assert torch.equal(got[0], expected) and got[1] == 2


def test_the_reference_is_built_once_per_seed_and_handed_out_as_pristine_copies(tmp_path):
    problem = open_problem(write(tmp_path, "p.py", COUNTED))
    first = problem.make_model("cpu", 42)
    with torch.no_grad():
        first.linear.weight.add_(1.0)  # a run that changes the model's state
    second = problem.make_model("cpu", 42)
    assert problem.module.builds[0] == 1
    assert not torch.equal(first.linear.weight, second.linear.weight)
    torch.manual_seed(42)
    assert torch.equal(second.linear.weight, torch.nn.Linear(4, 3).weight)  # seeded, built on the CPU
    problem.make_model("cpu", 7)
    assert problem.module.builds[0] == 2


LEGACY_ANSWER = """
import math
import torch
import torch.nn as nn
class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.Tensor(3, n))
        self.bias = nn.Parameter(torch.Tensor(3))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        nn.init.uniform_(self.bias, -1 / math.sqrt(n), 1 / math.sqrt(n))
    def forward(self, x):
        return torch.nn.functional.linear(x, self.weight, self.bias)
"""


def test_an_answer_that_draws_its_weights_with_the_legacy_constructor_gets_the_references(tmp_path):
    problem = open_problem(write(tmp_path, "p.py", COUNTED))
    model, _ = load_kernelbench_candidate(write(tmp_path, "a.py", LEGACY_ANSWER), problem, "cpu", seed=42)
    reference = problem.make_model("cpu", 42)
    assert torch.equal(model.weight, reference.linear.weight)
    assert torch.equal(model.bias, reference.linear.bias)


def test_kept_trial_inputs_are_handed_out_as_copies(tmp_path):
    problem = open_problem(write(tmp_path, "p.py", GELU))
    first = problem.kernelbench_inputs("cpu", 5)
    first[0].zero_()  # a candidate writing its inputs
    second = problem.kernelbench_inputs("cpu", 5)
    torch.manual_seed(5)
    assert torch.equal(second[0], torch.randn(3, 8))


def test_prefetch_does_the_cpus_share_ahead_with_the_same_numbers(tmp_path):
    # The worker calls prefetch holding none of the GPU's timing lock: the reference's CPU copy
    # and the trials' CPU draws, which the evaluation then takes as they would have been made.
    problem = open_problem(write(tmp_path, "p.py", COUNTED))
    kept = problem.prefetch(42, 5)
    assert problem.module.builds[0] == 1
    seeds = problem.trial_seeds(42, 5)
    assert sorted(problem._draws.by_seed) == sorted(seeds)
    assert kept == problem.kept_bytes() == 5 * 2 * 4 * 4 + (3 * 4 + 3) * 4
    alone = open_problem(write(tmp_path, "q.py", COUNTED + "# another text: its own draws\n"))
    for s in seeds:
        assert torch.equal(problem.kernelbench_inputs("cpu", s)[0], alone.kernelbench_inputs("cpu", s)[0])
    assert torch.equal(problem.make_model("cpu", 42).linear.weight, alone.make_model("cpu", 42).linear.weight)
    assert problem.module.builds[0] == 1  # the evaluation's reference is a copy of the prefetched one
    assert problem.prefetch(42, 5) == kept  # twice costs nothing more


def test_problems_of_the_same_text_share_their_trials_draws(tmp_path):
    # KernelBench's leaderboard holds one problem under each answer's name: a worker that drew a
    # text's trials for one file hands them to the next file of that text, not drawing again.
    first = open_problem(write(tmp_path, "l1_p37_gpt4o.py", COUNTED.replace("torch.randn(2, 4)", "draw()") + DRAW_COUNTER))
    second = open_problem(write(tmp_path, "l1_p37_deepseekcoder.py", COUNTED.replace("torch.randn(2, 4)", "draw()") + DRAW_COUNTER))
    seeds = first.trial_seeds(42, 5)
    first.prefetch(42, 5)
    assert first.module.draws[0] == 1 + 5  # the size's draw on meta (trial_inputs_device), the trials'
    draws = 5 * 2 * 4 * 4
    templates = (3 * 4 + 3) * 4
    assert first.kept() == draws // 2 + templates  # each counts half of what the two keep
    second.prefetch(42, 5)
    assert second.module.draws[0] == 1  # the size's on meta only: the trials' are taken, not drawn
    for s in seeds:
        assert torch.equal(first.kernelbench_inputs("cpu", s)[0], second.kernelbench_inputs("cpu", s)[0])
    assert first.kept() + second.kept() == draws + 2 * templates
    del first
    gc.collect()
    assert second.kept() == draws + templates  # the one left keeps them all
    other = open_problem(write(tmp_path, "other.py", COUNTED + "# another text\n"))
    assert other.kept() == 0 and not other._draws.by_seed  # another text draws its own


def _fresh_draw(seed, shape=(3, 8)):
    torch.manual_seed(seed)
    return torch.randn(*shape)


@pytest.mark.parametrize("change", ["zeroed in place", "storage replaced", "list entry replaced"])
def test_a_kept_draw_changed_by_a_candidate_is_drawn_again_at_its_use_and_noted(tmp_path, change):
    # A candidate runs in the worker's process, after the trials' draws were kept (prefetch) and
    # before the trials take them: draws it zeroed would decide its own trials (a kernel that
    # returns zeros would match), and a later candidate's.
    import kagent_worker.problem as kp
    problem = open_problem(write(tmp_path, "p.py", GELU))
    problem.prefetch(42, 5)
    seed = problem.trial_seeds(42, 5)[0]
    kept = problem._draws.by_seed[seed]
    if change == "zeroed in place":
        kept[0].zero_()
    elif change == "storage replaced":
        kept[0].data = torch.zeros(3, 8)
    else:
        kept[0] = torch.zeros(3, 8)
    got = problem.kernelbench_inputs("cpu", seed)
    assert torch.equal(got[0], _fresh_draw(seed)) and got[1] == 2
    found = kp.take_modified()
    assert len(found) == 1 and f"seed {seed}" in found[0]
    assert kp.take_modified() == []  # taken once
    assert torch.equal(problem.kernelbench_inputs("cpu", seed)[0], _fresh_draw(seed))  # kept again, as drawn
    assert kp.take_modified() == []
    assert problem.kept_bytes() == 5 * 3 * 8 * 4 + (8 * 4 + 4) * 4  # the bytes counted once


def test_kept_values_an_earlier_candidate_changed_are_dropped_before_the_next_request(tmp_path):
    # prefetch opens every request before its candidate runs: what it finds changed, an earlier
    # candidate of the worker did (its verdict is given); made again, and not charged to this one.
    import kagent_worker.problem as kp
    problem = open_problem(write(tmp_path, "p.py", COUNTED))
    other = open_problem(write(tmp_path, "q.py", GELU))
    problem.prefetch(42, 5)
    other.prefetch(42, 5)
    seed = problem.trial_seeds(42, 5)[1]
    other._draws.by_seed[seed][0].fill_(float("nan"))  # another problem's draw: a later victim's
    with torch.no_grad():
        problem._templates[42].linear.weight.zero_()  # the reference's kept CPU copy
    problem._templates[42].forward = lambda x: x  # and a forward set on the instance
    assert problem.module.builds[0] == 1
    problem.prefetch(42, 5)
    assert kp.take_modified() == []  # found before this request's candidate ran: not its doing
    assert torch.equal(other.kernelbench_inputs("cpu", seed)[0], _fresh_draw(seed))
    assert problem.module.builds[0] == 2  # the reference's copy built again
    torch.manual_seed(42)
    assert torch.equal(problem.make_model("cpu", 42).linear.weight, torch.nn.Linear(4, 3).weight)
    assert kp.verify_kept() == []  # all as kept now


def test_prefetch_leaves_errors_to_the_calls_that_report_them(tmp_path):
    broken = open_problem(write(tmp_path, "p.py", COUNTED.replace("return [torch.randn(2, 4)]", "raise ValueError('no')")))
    assert broken.prefetch(42, 5) >= 0
    with pytest.raises(KagentError) as err:
        broken.kernelbench_inputs("cpu", 1)
    assert err.value.kind == "problem_load_error"


def test_prefetch_builds_no_reference_whose_init_inputs_hold_tensors(tmp_path):
    # KernelBench moves tensor init inputs to the GPU before it builds the model: make_model's job.
    problem = open_problem(write(tmp_path, "p.py", COUNTED.replace("return [4]", "return [4, torch.ones(1)]")
                                 .replace("def __init__(self, n):", "def __init__(self, n, t):")))
    problem.prefetch(42, 0)
    assert problem.module.builds[0] == 0 and not problem._templates


HUGE = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2
def get_inputs():
    return [torch.randn(16384, 8192)]
def get_init_inputs():
    return []
"""


def test_trials_draw_on_the_cpu_up_to_a_size_and_on_the_device_above_it(tmp_path):
    assert open_problem(write(tmp_path, "small.py", GELU)).trial_inputs_device() == "cpu"
    huge = open_problem(write(tmp_path, "huge.py", HUGE))  # 512 MiB of inputs
    assert huge.trial_inputs_device() == "device"
    torch.manual_seed(3)
    with torch.device("meta"):
        expected_shape = torch.randn(16384, 8192).shape
    assert huge.kernelbench_inputs("meta", 3)[0].shape == expected_shape  # drawn on the device asked for


# Real answers use the problem's globals without defining them (l2_p10's `hardtanh_min`,
# l3_p29's `to_2tuple`, l3_p33's `batch_size`): KernelBench's harness runs the answer in the
# dict the problem's source ran in. Here a helper function and a size, neither in the answer.
PROBLEM_WITH_GLOBALS = GELU + """
def helper(x):
    return x * 2
"""
ANSWER_USING_THEM = """
import torch
class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.linear = torch.nn.Linear(8, 4)
        self.rows = batch
    def forward(self, x, n: int):
        return helper(torch.nn.functional.gelu(self.linear(x))) * self.scale / 2, x.sum()
batch = 99  # rebinding a size in the answer leaves the problem's own inputs alone (in
            # KernelBench's harness it would not: its get_inputs() reads the shared dict)
"""


def test_an_answer_sees_the_problems_globals_as_kernelbenchs_harness_gives_them(tmp_path):
    problem = open_problem(write(tmp_path, "p.py", PROBLEM_WITH_GLOBALS))
    model, _ = load_kernelbench_candidate(write(tmp_path, "a.py", ANSWER_USING_THEM), problem, "cpu", seed=42)
    reference = problem.make_model("cpu", 42)
    x = torch.randn(3, 8)
    assert torch.allclose(model(x, 2)[0], reference(x, 2)[0])
    assert model.rows == 99  # the answer's own rebinding, in its own names
    assert problem.module.batch == 3 and problem.make_inputs("cpu", 1)[0].shape[0] == 3
    assert problem.module.__name__ != type(model).__module__  # the answer is a module of its own
