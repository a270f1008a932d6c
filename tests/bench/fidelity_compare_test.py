#!/usr/bin/env python3
"""bench/fidelity/compare.py on a made-up collection: agreement per policy against KernelBench's
verdicts (here the leaderboard's, --kb-from-truth), every disagreement listed, a diagnosed one
with its cause, an undiagnosed one named in the summary; a strict-only reject is a policy case."""
import json
import os
import subprocess
import sys
import tempfile

COMPARE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "fidelity", "compare.py")


def record(kb, strict, reason=""):
    return {"status": kb, "verdicts": {"kernelbench": {"status": kb, "reason": ""},
                                      "strict": {"status": strict, "reason": reason}},
            "guards": [], "message": "m"}


def main():
    with tempfile.TemporaryDirectory(prefix="kagent-fidelity-") as d:
        evals = {"a": record("correct", "correct"), "b": record("correct", "rejected", "library_share"),
                 "c": record("runtime_error", "runtime_error")}
        for name, ev in evals.items():
            os.makedirs(os.path.join(d, "rw", "problems", name))
            with open(os.path.join(d, "rw", "problems", name, "trajectories.jsonl"), "w") as f:
                f.write(json.dumps({"turns": [{"eval": ev}]}) + "\n")
        truth = os.path.join(d, "truth.json")
        with open(truth, "w") as f:
            json.dump({n: {"level": 1, "kernelbench_verdict": "correct"} for n in evals}, f)
        causes = os.path.join(d, "causes.json")

        def run(cause_map):
            with open(causes, "w") as f:
                json.dump(cause_map, f)
            out = os.path.join(d, "out.md")
            r = subprocess.run([sys.executable, COMPARE, "--collection", os.path.join(d, "rw"), "--truth", truth,
                                "--kb-from-truth", "--causes", causes, "--out", out], capture_output=True, text=True)
            assert r.returncode == 0, r.stdout + r.stderr
            return r.stdout, open(out).read()

        line, md = run({"c": {"*": "a defect of its own"}})
        assert "kernelbench 66.7% agree (1 disagree), strict 33.3% agree (2 disagree)" in line, line
        assert "0 disagreement(s) undiagnosed" in line, line
        assert "| kernelbench | c | 1 | runtime_error" in md and "a defect of its own" in md, md
        assert "policy: strict rejects `library_share`" in md, md
        assert "its leaderboard verdicts; not run here" in md, md
        line, md = run({})
        assert "2 disagreement(s) undiagnosed" in line and "undiagnosed: kernelbench:c, strict:c" in line, line
        assert "**undiagnosed**" in md, md
    print("fidelity compare: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
