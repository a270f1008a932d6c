"""Construction, old and new, on the GPU: the reference Model and an answer's ModelNew built
the way kagent built them before (seeded, inside `with torch.device("cuda")`, so draws come
from the CUDA generator) and the way KernelBench's harness builds them (kagent_worker.problem:
on the CPU, then moved). Prints one JSON line per construction: the share of the answer's
weight elements that differ from the reference's, and the share of output elements outside
atol = rtol = 1e-2 when the answer's weights compute the reference's function.

Usage: python3 construction_compare.py PROBLEM ANSWER (tools/worker/python on PYTHONPATH).
The answer's load_inline is not built: only its weights are looked at."""

import json
import sys
import types

import torch
import torch.utils.cpp_extension as cpp_extension

cpp_extension.load_inline = lambda *args, **kwargs: types.SimpleNamespace()

from kagent_worker.loading import exec_file  # noqa: E402
from kagent_worker.problem import open_problem  # noqa: E402


def old_construction(problem, cls):
    torch.manual_seed(42)
    with torch.device("cuda"):
        return (cls or problem.module.Model)(*problem.init_inputs()).to("cuda")


def new_construction(problem, cls):
    return problem.make_model("cuda", 42, cls)


def main(problem_path, answer_path):
    problem = open_problem(problem_path)
    answer = exec_file(answer_path, "candidate_load_error")
    x = problem.kernelbench_inputs("cuda", 1234)[0]
    for name, make in (("old", old_construction), ("new", new_construction)):
        reference, candidate = make(problem, None), make(problem, answer.ModelNew)
        w_ref, b_ref = reference.linear.weight, reference.linear.bias
        differ = (w_ref != candidate.weight).float().mean().item()
        with torch.no_grad():
            expected = reference(x)
            got = torch.relu(torch.nn.functional.linear(x, candidate.weight, candidate.bias))
        outside = (~torch.isclose(got, expected, atol=1e-2, rtol=1e-2)).float().mean().item()
        print(json.dumps({"construction": name, "weights_differ_share": differ, "outputs_outside_share": outside,
                          "bias_differ_share": (b_ref != candidate.bias).float().mean().item()}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
