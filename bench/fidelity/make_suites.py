#!/usr/bin/env python3
"""The inputs of the fidelity benchmark (bench/fidelity/run.sh), made at run time, nothing kept:

  realworld  ../shared/realworld/kb_leaderboard (or $KAGENT_REALWORLD_DIR): its problems/ folder is
             kagent collect's suite and replay.jsonl its model; the same (problem, answer) pairs
             go to KernelBench's harness (kb_pairs_realworld.json).
  kits       the project's own hack kit (tests/gpu/hacks) and verdict kit (tests/gpu/kernels):
             one suite folder per answer format (a symlink per entry, named after the entry, so
             entries that share a problem stay apart), a replay file with each candidate as the
             model's answer, expectations per policy (kits.json), and the kernelbench-format
             entries as pairs for KernelBench's harness (kb_pairs_kits.json).

Usage: make_suites.py OUT_DIR   (prints what it wrote)
"""

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = [("hacks", ROOT / "tests/gpu/hacks/manifest.json"), ("kernels", ROOT / "tests/gpu/kernels/manifest.json")]


def realworld_dir() -> Path:
    env = os.environ.get("KAGENT_REALWORLD_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "realworld" / "kb_leaderboard"


def kernelbench_dir() -> Path:
    env = os.environ.get("KAGENT_KERNELBENCH_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "kernelbench"


def problem_path(p: str) -> Path:
    prefix = "kernelbench/"
    return kernelbench_dir() / p[len(prefix):] if p.startswith(prefix) else ROOT / p


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rw = realworld_dir()
    stems = sorted(p.stem for p in (rw / "answers").glob("*.py"))
    if not stems:
        raise SystemExit(f"make_suites: no answers in {rw / 'answers'} (set KAGENT_REALWORLD_DIR)")
    pairs = [{"name": s, "problem": str(rw / "problems" / f"{s}.py"), "candidate": str(rw / "answers" / f"{s}.py")}
             for s in stems]
    (out / "kb_pairs_realworld.json").write_text(json.dumps(pairs, indent=1))

    kits, kb_pairs = [], []
    for fmt in ("cuda", "kernelbench"):
        (out / f"kits_{fmt}").mkdir(exist_ok=True)
    replays = {"cuda": [], "kernelbench": []}
    for kit, manifest in MANIFESTS:
        for e in json.loads(manifest.read_text()):
            fmt = e.get("format", "cuda")
            name = f"{kit}__{e['name']}"
            problem, candidate = problem_path(e["problem"]), ROOT / e["candidate"]
            link = out / f"kits_{fmt}" / f"{name}.py"
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(problem)
            fence = "cuda" if fmt == "cuda" else "python"
            replays[fmt].append({"problem": name, "sample": 0, "turn": 0,
                                 "text": f"```{fence}\n{candidate.read_text()}\n```"})
            kits.append({"name": name, "kit": kit, "format": fmt, "problem": str(problem), "candidate": str(candidate),
                         "expect": e["expect"], "expect_reason": e.get("expect_reason", ""),
                         "expect_kernelbench": e.get("expect_kernelbench", e["expect"]),
                         "expect_kernelbench_reason": e.get("expect_kernelbench_reason", e.get("expect_reason", "")),
                         "bypass": e.get("bypass", e["expect"] == "rejected")})
            if fmt == "kernelbench":
                kb_pairs.append({"name": name, "problem": str(problem), "candidate": str(candidate)})
    for fmt, lines in replays.items():
        (out / f"kits_{fmt}.replay.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (out / "kits.json").write_text(json.dumps(kits, indent=1))
    (out / "kb_pairs_kits.json").write_text(json.dumps(kb_pairs, indent=1))
    print(f"make_suites: {len(pairs)} real answers from {rw}; {len(kits)} kit entries "
          f"({len(replays['cuda'])} cuda, {len(replays['kernelbench'])} kernelbench) in {out}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
