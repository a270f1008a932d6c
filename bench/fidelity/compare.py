#!/usr/bin/env python3
"""The fidelity benchmark's report: kagent's verdicts against KernelBench's harness.

Reads the kagent collections and KernelBench records that bench/fidelity/run.sh made, and
writes the markdown for RESULTS.md (stdout, or --out): per level and policy, a confusion table
of kagent against KernelBench's harness on the real answers (which KernelBench's leaderboard
judged correct, truth.json), every disagreement with its cause, and the kits (every bypass
rejected under both policies, every policy case as expected). Causes: causes.json beside this
file holds the diagnosis of each disagreement a person has looked into (keyed by answer
name, then policy or "*"); a disagreement without one is listed as "undiagnosed" and fails
the summary line. An entry's "when" ({policy: "status/reason"}, or a list of them for an answer
whose verdict depends on a race it wins or loses) names the kagent verdicts it explains: when
kagent's verdict has since changed to another, the diagnosis is stale and counts as none.

Usage: compare.py --collection RW --kb KB_RW.json --truth TRUTH.json
                  --kits KITS.json --kit-collections DIR_CUDA DIR_KB --kb-kits KB_KITS.json [--out FILE]
"""

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "collect"))
from collection_turns import first_evals  # noqa: E402

POLICIES = ("kernelbench", "strict")
HERE = Path(__file__).resolve().parent


def under(ev, policy):
    """(status, reason) of an eval record under `policy`."""
    if not ev:
        return ("no_verdict", "")
    v = (ev.get("verdicts") or {}).get(policy)
    if v:
        return (v["status"], v.get("reason", ""))
    return (ev.get("status", "?"), ev.get("reason", ""))


def kb_state(rec):
    if rec is None:
        return "not run"
    if rec.get("leaderboard"):
        return "correct" if rec.get("correct") else "not correct (leaderboard)"
    if rec.get("error"):
        return "error"
    if not rec.get("compiled"):
        return "compile_error"
    return "correct" if rec.get("correct") else "not correct"


def kb_detail(rec):
    if not rec:
        return ""
    if rec.get("leaderboard"):
        return "the leaderboard's verdict (the harness did not reach it in this run)"
    md = rec.get("metadata") or {}
    for k in ("max_difference", "correctness_issue", "runtime_error", "compilation_error", "compilation_error_name"):
        if md.get(k):
            v = md[k]
            return f"{k}: {str(v)[:160]}"
    return rec.get("error", "")[:160]


def kagent_detail(ev):
    if not ev:
        return "no verdict"
    c = ev.get("correctness") or {}
    err = f"; max abs error {c.get('max_abs_error', 0):.3g}" if c else ""
    return (ev.get("message", "") or "")[:200].replace("|", "/") + err


def named(ev, expected, got, action_key):
    """Whether the expected reason is there: the verdict's own, or, as the guard suite judges
    (tests/gpu/guard_suite_test.cpp), a guard that also rejected (a hack can trip two guards;
    the first to run names the verdict). An expected `correct (flag)` needs that guard's flag."""
    status, reason = expected
    if not reason or got[1] == reason:
        return True
    want = "flag" if status == "correct" else "reject"
    return any(g.get("name") == reason and g.get(action_key, g.get("action")) == want for g in (ev or {}).get("guards", []))


def verdict_key(ev, policy):
    status, reason = under(ev, policy)
    return f"{status}/{reason}" if reason else status


def cause_of(causes, name, policy, ev):
    """The diagnosis of a disagreement, or None; a stale one (written for another verdict) is
    returned as None with the note why, so that it is looked at again."""
    c = causes.get(name, {})
    text = c.get(policy) or c.get("*")
    when = c.get("when", {}).get(policy)
    explained = [when] if isinstance(when, str) else when or []
    if text and explained and verdict_key(ev, policy) not in explained:
        return None, f"stale: diagnosed for {' or '.join(f'`{w}`' for w in explained)}, now `{verdict_key(ev, policy)}`"
    return text, None


def findings_table(names, kagent):
    lines = ["| guard | strict action | kernelbench action | answers | examples (answer: message) |",
             "|---|---|---|---|---|"]
    by_guard = defaultdict(list)
    for n in names:
        for g in (kagent.get(n) or {}).get("guards", []):
            by_guard[(g["name"], g.get("action", ""), g.get("kernelbench_action", ""))].append((n, g.get("message", "")))
    for (guard, sa, ka), hits in sorted(by_guard.items()):
        examples = "; ".join(f"{n}: {m[:90]}" for n, m in hits[:3]).replace("|", "/")
        lines.append(f"| {guard} | {sa} | {ka} | {len(hits)} | {examples} |")
    if not by_guard:
        lines.append("| - | | | 0 | |")
    return lines


def kagent_only(truth, kagent, out):
    """kagent's verdicts on the answers it ran, without KernelBench's (FIDELITY_MATCH runs)."""
    names = sorted(n for n in truth if n in kagent)
    lines = [f"### kagent alone on {len(names)} real answers\n", "| answer | level | kernelbench | strict | detail |",
             "|---|---|---|---|---|"]
    counts = defaultdict(int)
    for n in names:
        k, s = under(kagent[n], "kernelbench"), under(kagent[n], "strict")
        counts[("kernelbench", k[0])] += 1
        counts[("strict", s[0])] += 1
        if k[0] != "correct" or s[0] != "correct":
            lines.append(f"| {n} | {truth[n]['level']} | {k[0]} {k[1]} | {s[0]} {s[1]} | {kagent_detail(kagent[n])} |")
    lines += ["", "#### Guard findings\n"] + findings_table(names, kagent)
    Path(out).write_text("\n".join(lines) + "\n") if out else print("\n".join(lines))
    print(f"kagent alone: {len(names)} real answers: " + ", ".join(
        f"{p} {counts[(p, 'correct')]} correct" for p in POLICIES))
    return 0


def write_verdicts(path, truth, kagent, kb):
    with open(path, "w") as f:
        for n in sorted(truth):
            ev = kagent.get(n)
            if not ev:
                continue
            row = {"answer": n, **{p: list(under(ev, p)) for p in POLICIES},
                   "own_kernel_share": ev.get("own_kernel_share"),
                   "guards": [{k: g.get(k) for k in ("name", "action", "kernelbench_action", "message")}
                              for g in ev.get("guards") or []],
                   "message": ev.get("message", "")}
            if n in kb:
                r = kb[n]
                row["kernelbench_harness"] = ({"leaderboard": True, "correct": r.get("correct")} if r.get("leaderboard")
                                              else {k: r.get(k) for k in ("compiled", "correct", "tolerance", "wall_s",
                                                                          "error")
                                                    if r.get(k) is not None})
            f.write(json.dumps(row) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--collection", required=True)
    ap.add_argument("--kb", help="KernelBench's records; without them, kagent's verdicts alone (a quick look)")
    ap.add_argument("--truth", required=True)
    ap.add_argument("--kits")
    ap.add_argument("--kit-collections", nargs="*", default=[])
    ap.add_argument("--kb-kits")
    ap.add_argument("--kb-from-verdicts",
                    help="KernelBench's records from an earlier run's --verdicts-out file (its `kernelbench_harness` "
                         "fields): the pinned harness's verdicts do not change while the answers do not, so a run "
                         "that re-judges only kagent compares against them")
    ap.add_argument("--kb-from-truth", action="store_true",
                    help="no KernelBench run here (or, with --kb, for the answers its run did not reach): its "
                         "leaderboard's verdicts (truth.json, on an L40S) stand in")
    ap.add_argument("--kb-recheck",
                    help="KernelBench's records from a second run of the harness on a few answers (where the first "
                         "run's child died of the run's own cause, not the answer's); they replace the first "
                         "run's records of the same answers, and the report names them")
    ap.add_argument("--causes", default=str(HERE / "causes.json"))
    ap.add_argument("--out")
    ap.add_argument("--verdicts-out", help="kagent's verdict of each real answer as JSON lines (both policies, the "
                                           "own-kernel share, every guard finding, the harness's verdict)")
    a = ap.parse_args(argv)

    truth = json.loads(Path(a.truth).read_text())
    kagent = first_evals(a.collection)
    harness_run = a.kb or a.kb_from_verdicts
    if not harness_run and not a.kb_from_truth:
        return kagent_only(truth, kagent, a.out)
    # kb_leaderboard's truth has the leaderboard's verdict of every answer; cuda_l1's has none
    # (only KernelBench's harness verdict where its publisher ran it), so nothing stands in there.
    leaderboard = {n: {"compiled": True, "correct": t["kernelbench_verdict"] == "correct",
                       "tolerance": "1e-2 (leaderboard, L40S)", "leaderboard": True}
                   for n, t in truth.items() if "kernelbench_verdict" in t}
    filled = []
    if a.kb_from_verdicts:
        rows = map(json.loads, Path(a.kb_from_verdicts).read_text().splitlines())
        kb = {row["answer"]: row["kernelbench_harness"] for row in rows if row.get("kernelbench_harness")}
    elif a.kb:
        kb = {r["name"]: r for r in json.loads(Path(a.kb).read_text())}
        # --kb with --kb-from-truth: a harness run that did not reach every answer (a device
        # budget cut it); the leaderboard's verdicts stand in for the rest, and say so.
        filled = sorted(n for n in leaderboard if n not in kb) if a.kb_from_truth else []
        kb.update({n: leaderboard[n] for n in filled})
    else:
        kb = leaderboard
    rechecked = []
    if a.kb_recheck:
        for r in json.loads(Path(a.kb_recheck).read_text()):
            if r["name"] in truth:
                first = kb.get(r["name"], {})
                r = dict(r, first_run=first.get("error") or first.get("metadata") or "no record")
                kb[r["name"]] = r
                rechecked.append(r["name"])
    causes = json.loads(Path(a.causes).read_text()) if Path(a.causes).exists() else {}
    if a.verdicts_out:
        write_verdicts(a.verdicts_out, truth, kagent, kb if harness_run else {})
    # Answers kagent has no record of (a collection cut short, FIDELITY_MATCH) are counted apart,
    # not as disagreements.
    names = sorted(n for n in truth if n in kagent)
    not_run = sorted(n for n in truth if n not in kagent)
    # Nor are answers with no record of the harness (an earlier run's verdicts file lacks an
    # answer kagent had not reached then): "not run" is no verdict to agree with.
    no_harness = sorted(n for n in names if n not in kb)
    names = [n for n in names if n in kb]
    if not names:
        print(f"Fidelity: no kagent record of any of the {len(truth)} real answers in {a.collection}")
        return 1
    lines = []
    w = lines.append

    w("### Real answers: kagent against KernelBench's harness\n")
    tol = {r.get("tolerance") for r in kb.values() if r.get("tolerance") is not None}
    if not harness_run:
        source = "(its leaderboard verdicts; not run here)"
    elif filled:
        source = (f"run here on {len(truth) - len(filled)} of the {len(truth)} (the leaderboard's verdicts stand in "
                  f"for the {len(filled)} it did not reach: {', '.join(filled[:8])}{' ...' if len(filled) > 8 else ''})")
    elif a.kb_from_verdicts:
        source = f"as an earlier run on the same answers judged them (its records: {Path(a.kb_from_verdicts).name})"
    else:
        source = "run here"
    if rechecked:
        source += (f"; {len(rechecked)} answer(s) judged by a second run of the harness on the same machine, their "
                   f"first run's child having died of the run's own cause ({', '.join(sorted(rechecked))}: "
                   + "; ".join(f"first run: {str(kb[n]['first_run'])[:160]}" for n in sorted(rechecked)) + ")")
    judged = ", each judged correct by KernelBench's leaderboard" if leaderboard else ""
    w(f"{len(names)} answers of `{Path(a.truth).resolve().parent.name}`{judged}. KernelBench's "
      f"harness {source}{': tolerance ' + ', '.join(map(str, sorted(tol, key=str))) if tol else ''}. kagent: "
      "`kagent collect` with the "
      "answers replayed, verdicts under both policies from the same evaluation." +
      (f" **{len(not_run)} of the {len(truth)} have no kagent record** (the collection was cut short or "
       f"filtered): {', '.join(not_run[:10])}{' ...' if len(not_run) > 10 else ''}." if not_run else "") +
      (f" **{len(no_harness)} have no record of KernelBench's harness** and are left out: "
       f"{', '.join(no_harness[:10])}{' ...' if len(no_harness) > 10 else ''}." if no_harness else "") + "\n")
    summary = {}
    undiagnosed = []
    disagreements = []
    for policy in POLICIES:
        w(f"#### Policy `{policy}`\n")
        w("| level | answers | both correct | kagent only | KernelBench only | both not | agree |")
        w("|---|---|---|---|---|---|---|")
        totals = defaultdict(lambda: [0, 0, 0, 0])
        for n in names:
            level = str(truth[n]["level"])
            k_ok = under(kagent.get(n), policy)[0] == "correct"
            b_ok = kb_state(kb.get(n)) == "correct"
            idx = 0 if k_ok and b_ok else 1 if k_ok else 2 if b_ok else 3
            for key in (level, "all"):
                totals[key][idx] += 1
            if k_ok != b_ok:
                disagreements.append((policy, n, level))
        for key in sorted(totals, key=lambda k: (k == "all", k)):
            t = totals[key]
            agree = (t[0] + t[3]) / sum(t)
            w(f"| {key} | {sum(t)} | {t[0]} | {t[1]} | {t[2]} | {t[3]} | {100 * agree:.1f}% |")
        summary[policy] = totals["all"]
        w("")
    w("#### Every disagreement, with its cause\n")
    w("| policy | answer | level | kagent | KernelBench's harness | cause |")
    w("|---|---|---|---|---|---|")
    for policy, n, level in disagreements:
        st, rs = under(kagent.get(n), policy)
        cause, stale = cause_of(causes, n, policy, kagent.get(n))
        if not cause and not stale and policy == "strict" and st == "rejected" and under(kagent.get(n), "kernelbench")[0] == "correct":
            cause = f"policy: strict rejects `{rs}`, which KernelBench's rules allow (correct under kernelbench)"
        if not cause:
            undiagnosed.append(f"{policy}:{n}")
        w(f"| {policy} | {n} | {level} | {st}{' (' + rs + ')' if rs else ''}: {kagent_detail(kagent.get(n))} | "
          f"{kb_state(kb.get(n))}{': ' + kb_detail(kb.get(n)) if kb_detail(kb.get(n)) else ''} | "
          f"{cause or '**undiagnosed**' + (' (' + stale + ')' if stale else '')} |")
    if not disagreements:
        w("| - | none | | | | |")
    w("")

    # Every guard's findings over the real answers, for the review of false flags and rejects.
    w("#### Guard findings on the real answers\n")
    for line in findings_table(names, kagent):
        w(line)
    w("")

    kit_line = ""
    if a.kits:
        kits = json.loads(Path(a.kits).read_text())
        kv = {}
        for c in a.kit_collections:
            kv.update(first_evals(c))
        kbk = {r["name"]: r for r in json.loads(Path(a.kb_kits).read_text())} if a.kb_kits else {}
        w("### The project's kits under both policies (and KernelBench's harness on the kernelbench-format ones)\n")
        w("| entry | expected strict | kagent strict | expected kernelbench | kagent kernelbench | KernelBench's harness | ok |")
        w("|---|---|---|---|---|---|---|")
        bypass_ok = bypass_n = case_ok = case_n = 0
        for e in kits:
            ev = kv.get(e["name"])
            s = under(ev, "strict")
            k = under(ev, "kernelbench")
            exp_s = (e["expect"], e["expect_reason"])
            exp_k = (e["expect_kernelbench"], e["expect_kernelbench_reason"])
            ok = (s[0] == exp_s[0] and named(ev, exp_s, s, "action") and
                  k[0] == exp_k[0] and named(ev, exp_k, k, "kernelbench_action"))
            if e["bypass"]:
                bypass_n += 1
                bypass_ok += ok and s[0] == "rejected" and k[0] == "rejected"
            else:
                case_n += 1
                case_ok += ok
            fmt = lambda v: f"{v[0]}{' (' + v[1] + ')' if v[1] else ''}"
            w(f"| {e['name']} | {fmt(exp_s)} | {fmt(s)} | {fmt(exp_k)} | {fmt(k)} | "
              f"{kb_state(kbk.get(e['name'])) if e['format'] == 'kernelbench' else '-'} | {'ok' if ok else '**FAIL**'} |")
        w("")
        kit_line = (f"; kits: {bypass_ok} of {bypass_n} bypasses rejected under both policies, "
                    f"{case_ok} of {case_n} other entries as expected")
    text = "\n".join(lines) + "\n"
    if a.out:
        Path(a.out).write_text(text)
    else:
        print(text)
    parts = []
    for policy in POLICIES:
        t = summary[policy]
        parts.append(f"{policy} {100 * (t[0] + t[3]) / sum(t):.1f}% agree ({t[1] + t[2]} disagree)")
    of = f" of {len(truth)}" if not_run else ""
    print(f"Fidelity: {len(names)}{of} real answers, kagent vs KernelBench's harness: " + ", ".join(parts) +
          f"; {len(undiagnosed)} disagreement(s) undiagnosed" + kit_line)
    if undiagnosed:
        more = f" and {len(undiagnosed) - 20} more" if len(undiagnosed) > 20 else ""
        print("undiagnosed: " + ", ".join(undiagnosed[:20]) + more)
    return 0


if __name__ == "__main__":
    sys.exit(main())
