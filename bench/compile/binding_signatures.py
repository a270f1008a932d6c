#!/usr/bin/env python3
"""What the load_inline extensions of a folder of KernelBench-format answers ask kagent's binding
(main.cpp) to do: how many have cpp_sources that only declare functions, and how many distinct
signatures their listed functions have: the case for the binding compiled once per distinct set of
declarations instead of once per answer (tools/compiler/shared_binding.h, NOTES.md "Shared binding"). Reads each answer's calls with
kagent's own reader (tools/worker/python/kagent_worker/inline_calls.py), which runs no answer code.

    binding_signatures.py ANSWERS_DIR [--top N]

Exit status 0; 2 when the folder has no answers.
"""

import argparse
import collections
import json
import pathlib
import re
import subprocess
import sys

READER = pathlib.Path(__file__).resolve().parents[2] / "tools/worker/python/kagent_worker/inline_calls.py"


def declarations(cpp_sources):
    """The text without comments and preprocessor lines, split at ';'; None when it has a body."""
    text = re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", "\n".join(cpp_sources)), flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))
    if "{" in text:
        return None
    return [d.strip() for d in text.split(";") if d.strip()]


def signature(decl):
    """(return type, parameter types) with names dropped and spaces normalised; None if unreadable."""
    m = re.match(r"(.*?)\b(\w+)\s*\((.*)\)\s*$", decl, flags=re.S)
    if not m:
        return None
    ret, _, params = m.groups()
    types = []
    for p in (x.strip() for x in params.split(",") if x.strip()):
        # "const torch::Tensor& x" -> "const torch::Tensor&": the last identifier is the name.
        types.append(re.sub(r"\s+", " ", re.sub(r"\s*\b\w+\s*$", "", p) if re.search(r"[\w&*]\s+\w+\s*$", p) else p))
    return re.sub(r"\s+", " ", ret.strip()), tuple(types)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("answers", type=pathlib.Path)
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    files = sorted(args.answers.glob("*.py"))
    if not files:
        print(f"binding_signatures: no *.py answers in {args.answers}", file=sys.stderr)
        return 2
    extensions = declaration_only = 0
    sigs = collections.Counter()
    for f in files:
        out = subprocess.run([sys.executable, "-I", "-S", str(READER), str(f)], capture_output=True, text=True)
        try:
            calls = json.loads(out.stdout).get("calls", [])
        except ValueError:
            continue
        for c in calls:
            if not c.get("ok"):
                continue
            extensions += 1
            decls = declarations(c["call"].get("cpp_sources", []))
            if decls is None:
                continue
            declaration_only += 1
            for d in decls:
                sigs[signature(d) or ("?", (d[:60],))] += 1
    print(f"{len(files)} answers, {extensions} load_inline extensions, {declaration_only} with cpp_sources that only "
          f"declare; {sum(sigs.values())} functions, {len(sigs)} distinct signatures")
    for (ret, params), n in sigs.most_common(args.top):
        print(f"{n:5d}  {ret}({', '.join(params)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
