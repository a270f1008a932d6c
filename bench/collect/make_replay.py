"""Writes the suite list and the replay file of the collection check: one recorded answer per
(problem, sample, turn), in the KernelBench answer format (a ```python block with ModelNew).

  turn 1  every problem: a reference-wrapping ModelNew (the problem's own Model, renamed): the
          work is PyTorch's, so every one is expected `rejected` (no_kernel: no kernel of its own)
  turn 2  the problems with a kernel in bench/collect/kernels/ (Triton): that kernel, expected
          correct; every other problem: the reference-wrapping ModelNew with its output shifted
          by one, expected incorrect

usage: python3 make_replay.py KERNELBENCH_DIR PROBLEMS_TXT OUT_DIR [--samples N] [--delay-ms D]
Writes OUT_DIR/suite.txt (absolute paths: a kagent suite list file) and OUT_DIR/replay.jsonl,
and prints how many answers of each kind it wrote.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def reference_wrapper(problem_source, shift=False):
    body = "        return super().forward(*args) + 1.0\n" if shift else "        return super().forward(*args)\n"
    return (problem_source.rstrip() + "\n\n\nclass ModelNew(Model):\n"
            "    \"\"\"The reference itself: same __init__, same forward.\"\"\"\n\n"
            "    def forward(self, *args):\n" + body)


def answer(text, why):
    return f"{why}\n\n```python\n{text.rstrip()}\n```\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernelbench")
    ap.add_argument("problems", help="one problem a line, relative to KERNELBENCH_DIR (level1/12_....py)")
    ap.add_argument("out")
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("--delay-ms", type=int, default=0, help="the model's latency per answer (0: a zero-latency model)")
    args = ap.parse_args()

    rel = [line.strip() for line in open(args.problems) if line.strip() and not line.startswith("#")]
    os.makedirs(args.out, exist_ok=True)
    kernels_dir = os.path.join(HERE, "kernels")
    suite, lines, counts = [], [], {"reference": 0, "kernel": 0, "wrong": 0}
    for r in rel:
        path = os.path.join(os.path.abspath(args.kernelbench), r)
        if not os.path.isfile(path):
            sys.exit(f"make_replay: error: no such problem {path}")
        suite.append(path)
        name = os.path.splitext(os.path.basename(r))[0]
        source = open(path).read()
        kernel_file = os.path.join(kernels_dir, name + ".py")
        turns = [("reference", answer(reference_wrapper(source), "A ModelNew that reuses the reference."))]
        if os.path.isfile(kernel_file):
            turns.append(("kernel", answer(open(kernel_file).read(), "A Triton kernel for the whole forward.")))
        else:
            turns.append(("wrong", answer(reference_wrapper(source, shift=True), "The reference, shifted.")))
        for s in range(args.samples):
            for t, (kind, text) in enumerate(turns):
                counts[kind] += 1
                lines.append(json.dumps({"problem": name, "sample": s, "turn": t, "text": text, "delay_ms": args.delay_ms,
                                         "usage": {"prompt_tokens": 2000 + 500 * t, "completion_tokens": len(text) // 4}}))
    with open(os.path.join(args.out, "suite.txt"), "w") as f:
        f.write("\n".join(suite) + "\n")
    with open(os.path.join(args.out, "replay.jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")
    levels = sorted({os.path.basename(os.path.dirname(p)) for p in suite})
    print(f"make_replay: {len(suite)} problems ({', '.join(levels)}), {args.samples} sample(s) x 2 turns: "
          f"{counts['reference']} reference-wrapping, {counts['kernel']} Triton kernels, {counts['wrong']} shifted outputs")


if __name__ == "__main__":
    main()
