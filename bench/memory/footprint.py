"""The footprint of every KernelBench level-1 and level-2 problem at its official size: the
bytes of its inputs, parameters and buffers, and outputs, derived on meta tensors (no memory,
no GPU) the way kagent derives a problem's spec. Writes the largest N, one per line:
`<bytes> <level>/<file>`, the list bench/memory/sweep.py evaluates.

usage: python3 bench/memory/footprint.py KERNELBENCH_DIR [N] > bench/memory/largest50.txt
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "worker", "python"))
from kagent_worker.problem import derive_spec, open_problem  # noqa: E402

SIZES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int64": 8, "int32": 4, "bool": 1, "uint8": 1,
         "int8": 1}


def nbytes(entry):
    n = 1
    for d in entry["shape"]:
        n *= d
    return n * SIZES.get(entry["dtype"], 4)


def footprint(path):
    spec = derive_spec(open_problem(path))
    return (sum(nbytes(e) for e in spec["inputs"] if e.get("kind", "tensor") == "tensor")
            + sum(nbytes(e) for e in spec["params"]) + sum(nbytes(e) for e in spec["outputs"]))


def main():
    root, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 50
    rows = []
    for level in ("level1", "level2"):
        for name in sorted(os.listdir(os.path.join(root, level))):
            if name.endswith(".py"):
                try:
                    rows.append((footprint(os.path.join(root, level, name)), f"{level}/{name}"))
                except Exception as exc:  # a problem that does not derive is said, not dropped silently
                    print(f"footprint: {level}/{name}: {exc}", file=sys.stderr)
    rows.sort(key=lambda r: -r[0])
    for size, name in rows[:count]:
        print(size, name)


if __name__ == "__main__":
    main()
