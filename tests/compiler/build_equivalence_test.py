#!/usr/bin/env python3
"""bench/compile/check_build_equivalence.py on made-up runs: equal runs agree (exit 0), a changed
status, error text or fallback reason is a difference (exit 1), a fingerprint of a run agrees
with the run itself, an unreadable file is exit 2."""
import json
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "compile",
                     "check_build_equivalence.py")


def run(*args):
    return subprocess.run([sys.executable, CHECK, *args], capture_output=True, text=True)


def write(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def main():
    with tempfile.TemporaryDirectory(prefix="kagent-equivalence-") as d:
        return check(d)


def check(d):
    base = [
        {"answer": "a", "status": "ok", "fallbacks": {}, "errors": ""},
        {"answer": "b", "status": "compile_error", "fallbacks": {},
         "errors": "b/cuda.cu(3): error: identifier \"y\" is undefined (kagent_0123456789abcdef)"},
        {"answer": "c", "status": "fallback", "fallbacks": {"ext": "kagent's build of ext failed: the link failed"}},
    ]
    before, same, fp = (os.path.join(d, n) for n in ("before.jsonl", "same.jsonl", "fp.jsonl"))
    write(before, base)
    # The op namespace differs between pipeline versions: masked.
    write(same, [dict(base[0]), dict(base[1], errors=base[1]["errors"].replace("0123456789abcdef", "fedcba9876543210")),
                 dict(base[2])])
    r = run(before, same)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 difference(s)" in r.stdout, r.stdout
    assert run("--fingerprint", before, fp).returncode == 0
    r = run(fp, same)
    assert r.returncode == 0, r.stdout + r.stderr
    for i, changed in ((0, {"status": "compile_error"}), (1, {"errors": "b/cuda.cu(4): error: other"}),
                       (2, {"fallbacks": {"ext": "kagent's build of ext failed: another reason"}})):
        rows = [dict(x) for x in base]
        rows[i].update(changed)
        after = os.path.join(d, f"after{i}.jsonl")
        write(after, rows)
        r = run(fp, after)
        assert r.returncode == 1, (i, r.stdout)
        assert f"{base[i]['answer']}: " in r.stdout, r.stdout
    write(os.path.join(d, "short.jsonl"), base[:2])
    r = run(before, os.path.join(d, "short.jsonl"))
    assert r.returncode == 1 and "c: only in before" in r.stdout, r.stdout
    assert run(before, os.path.join(d, "missing.jsonl")).returncode == 2
    print("build equivalence check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
