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
        # A diagnosis names the verdict it explains: written for another, it is stale and counts as none.
        line, md = run({"c": {"*": "a defect of its own", "when": {"kernelbench": "runtime_error", "strict": "wrong"}}})
        assert "1 disagreement(s) undiagnosed" in line and "undiagnosed: strict:c" in line, line
        assert "(stale: diagnosed for `wrong`, now `runtime_error`)" in md, md
        # A race's answer: either way it goes, the diagnosis names both verdicts and holds.
        line, md = run({"c": {"*": "a race", "when": {"kernelbench": "runtime_error",
                                                      "strict": ["wrong", "runtime_error"]}}})
        assert "0 disagreement(s) undiagnosed" in line, line
        line, md = run({"c": {"*": "a race", "when": {"kernelbench": ["wrong", "rejected/no_kernel"]}}})
        assert "(stale: diagnosed for `wrong` or `rejected/no_kernel`, now `runtime_error`)" in md, md
        line, md = run({})
        assert "2 disagreement(s) undiagnosed" in line and "undiagnosed: kernelbench:c, strict:c" in line, line
        assert "**undiagnosed**" in md, md

        # A harness run that reached only some answers: the leaderboard stands in for the rest, said so.
        kb = os.path.join(d, "kb.json")
        with open(kb, "w") as f:
            json.dump([{"name": "a", "compiled": True, "correct": True, "tolerance": 0.01},
                       {"name": "c", "compiled": True, "correct": False, "tolerance": 0.01}], f)
        out = os.path.join(d, "partial.md")
        r = subprocess.run([sys.executable, COMPARE, "--collection", os.path.join(d, "rw"), "--truth", truth, "--kb", kb,
                            "--kb-from-truth", "--causes", causes, "--out", out], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        md = open(out).read()
        assert "run here on 2 of the 3 (the leaderboard's verdicts stand in for the 1 it did not reach: b)" in md, md
        assert "kernelbench 100.0% agree (0 disagree)" in r.stdout, r.stdout  # c: not correct on both sides

        # A second harness run on one answer (its first run's child died of the run's own cause)
        # replaces that answer's record, and the report names it with the first run's error.
        with open(kb, "w") as f:
            json.dump([{"name": "a", "compiled": None, "correct": False, "error": "the child died before writing a result"},
                       {"name": "b", "compiled": True, "correct": True, "tolerance": 0.01},
                       {"name": "c", "compiled": True, "correct": False, "tolerance": 0.01}], f)
        recheck = os.path.join(d, "kb_recheck.json")
        with open(recheck, "w") as f:
            json.dump([{"name": "a", "compiled": True, "correct": True, "tolerance": 0.01}], f)
        for extra, agree in (([], "kernelbench 66.7% agree (1 disagree)"),
                             (["--kb-recheck", recheck], "kernelbench 100.0% agree (0 disagree)")):
            r = subprocess.run([sys.executable, COMPARE, "--collection", os.path.join(d, "rw"), "--truth", truth,
                                "--kb", kb, *extra, "--causes", causes, "--out", out], capture_output=True, text=True)
            assert r.returncode == 0, r.stdout + r.stderr
            assert agree in r.stdout, (extra, r.stdout)
        verdicts = os.path.join(d, "verdicts.jsonl")
        r = subprocess.run([sys.executable, COMPARE, "--collection", os.path.join(d, "rw"), "--truth", truth, "--kb", kb,
                            "--kb-recheck", recheck, "--causes", causes, "--out", out, "--verdicts-out", verdicts],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        rows = {row["answer"]: row for row in map(json.loads, open(verdicts))}
        assert sorted(rows) == ["a", "b", "c"], rows
        assert rows["b"]["strict"] == ["rejected", "library_share"] and rows["a"]["kernelbench_harness"]["correct"], rows
        md = open(out).read()
        assert "1 answer(s) judged by a second run of the harness" in md and "(a: first run: the child died" in md, md

        # The harness's verdicts read back from that file (a run that re-judges only kagent), against a
        # set whose truth has no leaderboard verdicts (cuda_l1's: KernelBench's harness where run, else null).
        l1_truth = os.path.join(d, "l1_truth.json")
        with open(l1_truth, "w") as f:
            json.dump({n: {"level": 1, "kernelbench_harness": None} for n in evals}, f)
        r = subprocess.run([sys.executable, COMPARE, "--collection", os.path.join(d, "rw"), "--truth", l1_truth,
                            "--kb-from-verdicts", verdicts, "--causes", causes, "--out", out], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "kernelbench 100.0% agree (0 disagree)" in r.stdout, r.stdout  # a rechecked correct, b correct, c not
        md = open(out).read()
        assert "3 answers of `" in md and "judged correct by KernelBench's leaderboard" not in md, md
        # An answer with no record of the harness there is no verdict to agree with: left out, named.
        with open(verdicts) as f:
            rows = [json.loads(line) for line in f]
        with open(verdicts, "w") as f:
            f.writelines(json.dumps({k: v for k, v in row.items() if row["answer"] != "c" or k != "kernelbench_harness"})
                         + "\n" for row in rows)
        r = subprocess.run([sys.executable, COMPARE, "--collection", os.path.join(d, "rw"), "--truth", l1_truth,
                            "--kb-from-verdicts", verdicts, "--causes", causes, "--out", out], capture_output=True, text=True)
        assert r.returncode == 0 and "Fidelity: 2 real answers" in r.stdout, r.stdout + r.stderr
        assert "1 have no record of KernelBench's harness** and are left out: c." in open(out).read()

        # Kits: a case expected correct under kernelbench with a flag passes only with that flag;
        # a hack is caught by its named guard even when another guard named the verdict.
        kits = os.path.join(d, "kits.json")
        entries = [("flagged", "rejected", "library_share", "correct", "library_share"),
                   ("two_guards", "rejected", "leftover_memory", "rejected", "leftover_memory"),
                   ("unflagged", "rejected", "library_share", "correct", "library_share")]
        with open(kits, "w") as f:
            json.dump([{"name": n, "format": "cuda", "bypass": n == "two_guards", "expect": es, "expect_reason": rs,
                        "expect_kernelbench": ek, "expect_kernelbench_reason": rk} for n, es, rs, ek, rk in entries], f)
        guard = lambda name, strict, kbp: {"name": name, "action": strict, "kernelbench_action": kbp, "message": "m"}
        kit_evals = {"flagged": dict(record("correct", "rejected", "library_share"),
                                     guards=[guard("library_share", "reject", "flag")]),
                     "two_guards": dict(record("rejected", "rejected", "no_kernel"),
                                        guards=[guard("no_kernel", "reject", "reject"),
                                                guard("leftover_memory", "reject", "reject")]),
                     "unflagged": record("correct", "rejected", "library_share")}
        kit_evals["two_guards"]["verdicts"]["kernelbench"]["reason"] = "no_kernel"
        for name, ev in kit_evals.items():
            os.makedirs(os.path.join(d, "kits", "problems", name))
            with open(os.path.join(d, "kits", "problems", name, "trajectories.jsonl"), "w") as f:
                f.write(json.dumps({"turns": [{"eval": ev}]}) + "\n")
        r = subprocess.run([sys.executable, COMPARE, "--collection", os.path.join(d, "rw"), "--truth", truth,
                            "--kb-from-truth", "--causes", causes, "--kits", kits, "--kit-collections",
                            os.path.join(d, "kits"), "--out", out], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "kits: 1 of 1 bypasses rejected under both policies, 1 of 2 other entries as expected" in r.stdout, r.stdout
        assert "| unflagged |" in open(out).read() and "**FAIL**" in open(out).read()
    print("fidelity compare: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
