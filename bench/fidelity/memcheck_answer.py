#!/usr/bin/env python3
"""One KernelBench-format answer's forward under compute-sanitizer's memcheck, to settle whether
an answer reads or writes outside its tensors (bench/fidelity: a disagreement that one side saw
as a CUDA fault and the other as a correct answer).

Built as KernelBench builds it (the answer's module executed, ModelNew(*get_init_inputs()) and
get_inputs() on the CPU under seed 42, then moved to the GPU), run once, synchronised. Under
memcheck, PYTORCH_NO_CUDA_MEMORY_CACHING=1 gives every tensor its own cudaMalloc, so an access
past a tensor's end is reported instead of landing in the caching allocator's pool, where it
reads a neighbour's memory unseen.

  python3 memcheck_answer.py PROBLEM ANSWER            # build the extension (outside the tool)
  compute-sanitizer --tool memcheck python3 memcheck_answer.py PROBLEM ANSWER
"""

import sys
import types

import torch


def load(path: str, name: str) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__file__ = path
    exec(compile(open(path).read(), path, "exec"), mod.__dict__)
    return mod


def main() -> int:
    problem, answer = sys.argv[1], sys.argv[2]
    ref = load(problem, "problem")
    ans = load(answer, "answer")
    torch.manual_seed(42)
    model = ans.ModelNew(*ref.get_init_inputs()).cuda()
    torch.manual_seed(42)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in ref.get_inputs()]
    with torch.no_grad():
        out = model(*inputs)
    torch.cuda.synchronize()
    sizes = ", ".join(f"{list(x.shape)} {x.dtype}" for x in inputs if isinstance(x, torch.Tensor))
    print(f"memcheck_answer: forward ran; inputs {sizes}; output {list(out.shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
