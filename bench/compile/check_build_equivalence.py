#!/usr/bin/env python3
"""Whether two runs of compile_answers built the same answers the same way: per answer the
status (ok, compile_error, fallback, ...), which extensions went to torch's load_inline and why,
and the compile errors' text (kagent's op namespace, which depends on the pipeline's version,
masked). Prints every difference and a summary line; exit status 0 when the runs agree, 1 when
they do not, 2 on bad input.

    check_build_equivalence.py BEFORE.jsonl AFTER.jsonl
    check_build_equivalence.py --fingerprint RUN.jsonl OUT.jsonl

Either file may be a fingerprint (--fingerprint): the same verdicts with the errors and reasons
as SHA-256 digests, so that a reference can be committed without the answers' source lines that
compile errors quote.
"""

import argparse
import hashlib
import json
import re
import sys

_NS = re.compile(r"kagent_[0-9a-f]{16}")


def _norm(text):
    return _NS.sub("kagent_<ns>", text or "")


def load(path):
    rows = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"check_build_equivalence: error: {path}:{n}: not JSON ({e})")
            rows[row["answer"]] = row
    return rows


def _digest(text):
    return hashlib.sha256(_norm(text).encode()).hexdigest()


def verdict(row):
    """What must not change: status, fallbacks with reasons, errors (as digests)."""
    if "errors_sha256" in row:  # a fingerprint already
        return {k: row[k] for k in ("status", "fallbacks", "errors_sha256", "limit")}
    return {
        "status": row.get("status"),
        "fallbacks": {k: _digest(v) for k, v in (row.get("fallbacks") or {}).items()},
        "errors_sha256": _digest(row.get("errors")),
        "limit": row.get("limit") or "",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fingerprint", action="store_true", help="write BEFORE's fingerprint to AFTER instead")
    ap.add_argument("before")
    ap.add_argument("after")
    a = ap.parse_args()
    try:
        before = load(a.before)
        if a.fingerprint:
            with open(a.after, "w") as f:
                for name in sorted(before):
                    f.write(json.dumps({"answer": name, **verdict(before[name])}, sort_keys=True) + "\n")
            print(f"wrote {a.after}: {len(before)} answers")
            return 0
        after = load(a.after)
    except OSError as e:
        print(f"check_build_equivalence: error: {e}", file=sys.stderr)
        return 2
    differ = 0
    for name in sorted(set(before) | set(after)):
        if name not in before or name not in after:
            differ += 1
            print(f"{name}: only in {'before' if name in before else 'after'}")
            continue
        vb, va = verdict(before[name]), verdict(after[name])
        for key in vb:
            if vb[key] != va[key]:
                differ += 1
                b, a_ = vb[key], va[key]
                if key == "errors_sha256":  # the text where a run has it
                    b, a_ = before[name].get("errors", b), after[name].get("errors", a_)
                print(f"{name}: {key} differs\n  before: {str(b)[:400]!r}\n  after:  {str(a_)[:400]!r}")
    statuses = {}
    for row in after.values():
        statuses[row.get("status")] = statuses.get(row.get("status"), 0) + 1
    common = len(set(before) & set(after))
    print(f"build equivalence: {common} answers in both, {differ} difference(s); after: "
          + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
