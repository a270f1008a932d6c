#!/usr/bin/env python3
"""The report page in a real browser: `kagent report` writes pages for a real run (the replay
example, recorded by `kagent solve` without a GPU), a synthetic run in progress with timings, a
run with a torn last line and a synthetic collection; headless Chromium opens each and the
checks read the page through the browser (cells and their computed colours, the code diff's
added and removed lines, the charts' drawn points, sorting and problem sections). A screenshot
of every page is taken (--screenshots DIR keeps them; else they go with the temp folder).

Exit 0 when every check passed, 1 otherwise, 77 (ctest: skipped) only when no Chromium can be
found, saying so. Usage:
  report_browser_test.py --kagent build/kagent --synth build/report_synth [--screenshots DIR]
"""

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from headless_chromium import BrowserError, Chromium, find_chromium  # noqa: E402

SKIP = 77
REAL_RUN = os.path.join(HERE, "data", "gelu_replay_nogpu")
H200_RUN = os.path.join(HERE, "data", "gelu_replay_h200")
# The colours a user sees for each verdict (what report.css promises), checked as the browser computes them.
COLOURS = {"correct": "rgb(46, 157, 79)", "wrong": "rgb(217, 130, 43)", "compile_error": "rgb(142, 91, 208)",
           "runtime_error": "rgb(214, 69, 69)", "timeout": "rgb(181, 101, 29)", "rejected": "rgb(199, 154, 0)",
           "no_gpu": "rgb(125, 138, 160)", "format": "rgb(91, 139, 214)"}


class Checks:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def __call__(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print(f"ok    {name}")
        else:
            self.failed += 1
            print(f"FAIL  {name}" + (f": {detail}" if detail else ""))
        return ok


check = Checks()


def synthesize(synth, kind, folder, *options):
    subprocess.run([synth, kind, folder, *options], check=True, timeout=300)


def show_report(b, kagent, run_dir, page):
    """`kagent report run_dir --out page`, opened in the browser; returns the page's data."""
    subprocess.run([kagent, "report", run_dir, "--out", page], check=True, timeout=120, stdout=subprocess.DEVNULL)
    b.exceptions.clear()
    b.open("file://" + page)
    b.wait_for("document.body.dataset.drawn || document.body.dataset.error")
    check(f"{os.path.basename(page)}: drawn without a script error", not b.evaluate("document.body.dataset.error") and not b.exceptions,
          str(b.evaluate("document.body.dataset.error")) + " " + str(b.exceptions))
    data = b.evaluate("JSON.parse(document.getElementById('kagent-data').textContent)")
    return data.get(data["kind"])


GRID_JS = """[...document.querySelectorAll('#grid td.cell')].map(c => ({verdict: c.dataset.verdict, sample: +c.dataset.sample,
  turn: +c.dataset.turn, text: c.textContent, bg: getComputedStyle(c).backgroundColor, best: c.classList.contains('best')}))"""

DIFF_JS = """(() => { const d = document.querySelector('details.turn[data-turn="%d"] .diff');
  return d && {added: [...d.querySelectorAll('.d-add')].map(x => x.textContent),
               removed: [...d.querySelectorAll('.d-del')].map(x => x.textContent)}; })()"""

CHART_JS = """[...document.querySelectorAll('.chart[data-chart="%s"] > svg')].map(s => ({
  width: s.getBoundingClientRect().width, height: s.getBoundingClientRect().height,
  marks: s.querySelectorAll('rect.mark').length, bars: [...s.querySelectorAll('rect.bar')].map(r => +r.dataset.count),
  paths: [...s.querySelectorAll('path.series')].map(p => ({cls: p.getAttribute('class'), points: +p.dataset.points,
    width: p.getBBox().width, height: p.getBBox().height}))}))"""


def check_colours(cells):
    wrong = [(c["verdict"], c["bg"]) for c in cells if c["verdict"] in COLOURS and c["bg"] != COLOURS[c["verdict"]]]
    check("grid cells have their verdict's colour", not wrong, str(wrong))


def test_real_run(b, kagent, tmp, shots):
    show_report(b, kagent, REAL_RUN, os.path.join(tmp, "real_run.html"))
    cells = b.evaluate(GRID_JS)
    check("real run: a grid of 1 sample x 4 turns", len(cells) == 4, str(cells))
    check("real run: verdicts compile error, then compiled but not run (no GPU)",
          [c["verdict"] for c in cells] == ["compile_error", "no_gpu", "no_gpu", "no_gpu"], str(cells))
    check("real run: cell labels", [c["text"] for c in cells] == ["compile", "no gpu", "no gpu", "no gpu"], str(cells))
    check_colours(cells)
    # The diff of turn 2 against turn 1, as the browser drew it, against Python's difflib.
    b.evaluate("document.querySelector('#grid td.cell[data-turn=\"1\"]').click()")
    drawn = b.evaluate(DIFF_JS % 1)
    with open(os.path.join(REAL_RUN, "trajectories.jsonl")) as f:
        turns = json.loads(f.readline())["turns"]
    before, after = turns[0]["code"].splitlines(), turns[1]["code"].splitlines()
    expected = list(difflib.unified_diff(before, after, lineterm="", n=0))
    want_added = [x[1:] for x in expected if x.startswith("+") and not x.startswith("+++")]
    want_removed = [x[1:] for x in expected if x.startswith("-") and not x.startswith("---")]
    check("real run: turn 2's diff has added and removed lines", bool(drawn and drawn["added"] and drawn["removed"]), str(drawn))
    if drawn:
        check("real run: the diff's added lines are difflib's", drawn["added"] == want_added, f"{drawn['added']} vs {want_added}")
        check("real run: the diff's removed lines are difflib's", drawn["removed"] == want_removed, f"{drawn['removed']} vs {want_removed}")
    charts = b.evaluate(CHART_JS % "speedup")
    check("real run: a speedup chart, drawn", len(charts) == 1 and charts[0]["width"] > 100 and charts[0]["height"] > 100, str(charts))
    # No turn was timed (no GPU): the chart holds one verdict mark per turn and no line.
    check("real run: the chart marks every untimed turn", charts and charts[0]["marks"] == 4 and all(p["points"] == 0 for p in charts[0]["paths"]), str(charts))
    # A turn's details are drawn when it is opened.
    b.evaluate("document.querySelector('details.turn[data-turn=\"0\"]').open = true")
    compile_errors = b.wait_for("(document.querySelector('details.turn[data-turn=\"0\"] .turn-body') || {}).textContent")
    check("real run: turn 1 shows nvcc's error", "no suitable conversion function" in compile_errors, compile_errors[:300])
    b.evaluate("document.querySelectorAll('details.turn').forEach(d => d.open = d.dataset.turn === '1')")
    b.screenshot(os.path.join(shots, "report_run_nogpu.png"), max_height=2600)


def test_timed_run(b, kagent, synth, tmp, shots):
    run = os.path.join(tmp, "timed_run")
    synthesize(synth, "run", run, "--samples", "3", "--turns", "5", "--running", "1", "--seed", "2")
    data = show_report(b, kagent, run, os.path.join(tmp, "timed_run.html"))
    cells = b.evaluate(GRID_JS)
    check("timed run: every recorded turn has a cell, plus one for the turn in progress",
          len(cells) == sum(len(s["turns"]) for s in data["samples"]) + 1, f"{len(cells)} cells")
    check("timed run: the running sample's next turn shows as running",
          [c["text"] for c in cells if c["verdict"] == "pending"] == ["running"], str([c for c in cells if c["verdict"] == "pending"]))
    check_colours(cells)
    check("timed run: the best turn is marked in the grid",
          data["best"] is None or [(c["sample"], c["turn"]) for c in cells if c["best"]] == [(data["best"]["sample"], data["best"]["turn"])])
    notice = b.evaluate("(document.getElementById('warnings') || {}).textContent || ''")
    check("timed run: the page says the run has not finished", "has not finished" in notice, notice)
    charts = b.evaluate(CHART_JS % "speedup")
    timed = sum(1 for s in data["samples"] for t in s["turns"] if t["verdict"] == "correct" and t.get("speedup_eager"))
    check("timed run: the synthetic run has timed turns to draw", timed > 0)
    drawn_points = sum(p["points"] for c in charts for p in c["paths"] if "s-eager" in p["cls"])
    check("timed run: one chart per sample", len(charts) == 3, str(len(charts)))
    check("timed run: the eager lines hold every timed correct turn", drawn_points == timed, f"{drawn_points} vs {timed}")
    check("timed run: the lines are not empty", any(p["width"] > 0 or p["height"] > 0 for c in charts for p in c["paths"]), str(charts))
    b.evaluate("[...document.querySelectorAll('details.turn')].find(d => d.querySelector('.badge.v-correct')).open = true")
    profile = b.wait_for("(() => { const t = document.querySelector('details.turn[open] table.profile');"
                         " return t && {rows: t.rows.length, bound: t.closest('details').querySelector('[data-bound]').dataset.bound}; })()")
    check("timed run: a correct turn shows its profile table and bound", profile["rows"] >= 2 and profile["bound"] in ("memory", "compute", "latency"), str(profile))
    b.screenshot(os.path.join(shots, "report_run_synthetic.png"), max_height=2600)


def test_unfinished_runs(b, kagent, tmp):
    run = os.path.join(tmp, "torn_run")
    shutil.copytree(REAL_RUN, run)
    with open(os.path.join(run, "trajectories.jsonl"), "a") as f:
        f.write('{"sample": 1, "turns": [{"index": 0, "co')
    show_report(b, kagent, run, os.path.join(tmp, "torn.html"))
    notice = b.evaluate("(document.getElementById('warnings') || {}).textContent || ''")
    check("torn line: the page names the torn line", "last line is torn" in notice, notice)
    check("torn line: the recorded sample is still drawn", len(b.evaluate(GRID_JS)) == 4)
    # A run just created: its settings, no line yet.
    fresh = os.path.join(tmp, "fresh_run")
    os.makedirs(fresh)
    shutil.copy(os.path.join(REAL_RUN, "config.json"), fresh)
    open(os.path.join(fresh, "trajectories.jsonl"), "w").close()
    show_report(b, kagent, fresh, os.path.join(tmp, "fresh.html"))
    rows = b.evaluate("[...document.querySelectorAll('#grid tbody tr')].map(r => r.textContent)")
    check("fresh run: its sample shows as not started", len(rows) == 1 and "not started" in rows[0], str(rows))
    # A collection with a manifest and nothing else yet.
    empty = os.path.join(tmp, "empty_collection")
    os.makedirs(empty)
    with open(os.path.join(empty, "manifest.json"), "w") as f:
        json.dump({"kind": "kagent-collection", "schema_version": 1, "config": {"samples": 2, "turns": 3},
                   "suite": {"problems": [{"name": "19_ReLU", "level": 1}]}}, f)
    show_report(b, kagent, empty, os.path.join(tmp, "empty.html"))
    check("empty collection: its problem is listed as not started",
          b.evaluate("[...document.querySelectorAll('#problems-table tbody tr[data-problem]')].map(r => r.dataset.outcome)") == ["not_started"])


def test_collection(b, kagent, synth, tmp, shots):
    coll = os.path.join(tmp, "collection")
    synthesize(synth, "collection", coll, "--problems", "40", "--samples", "4", "--turns", "4", "--seed", "5")
    data = show_report(b, kagent, coll, os.path.join(tmp, "collection.html"))
    groups = [g["level"] for g in data["metrics"]["groups"]]
    rows = b.evaluate("[...document.querySelectorAll('#metrics-table tr[data-level]')].map(r => [r.dataset.policy, r.dataset.level])")
    own = [level for policy, level in rows if policy == data["policy"]]
    check("collection: the metrics table has a row per level and one for all, per policy",
          own == groups and own[-1] == "all" and len(rows) == 2 * len(groups), f"{rows} vs {groups}")
    source = b.evaluate("document.getElementById('metrics-source').textContent")
    check("collection: the metrics are said to come from metrics.json", source == "from metrics.json", source)
    problems = b.evaluate("[...document.querySelectorAll('#problems-table tbody tr[data-problem]')].map(r => r.dataset.problem)")
    check("collection: every problem has a row", sorted(problems) == sorted(p["name"] for p in data["problems"]), f"{len(problems)} rows")
    # Sort by best speedup over eager: the first click puts the fastest first.
    b.evaluate("document.querySelector('#problems-table th[data-key=\"best_speedup_eager\"]').click()")
    shown = b.evaluate("[...document.querySelectorAll('#problems-table tbody tr[data-problem]')].map(r => r.dataset.problem)")
    speed = {p["name"]: p.get("best_speedup_eager") or -1 for p in data["problems"]}
    values = [speed[n] for n in shown]
    check("collection: sorting by speedup orders the rows", values == sorted(values, reverse=True), str(values[:10]))
    b.evaluate("document.querySelector('#problems-table th[data-key=\"outcome\"]').click()")
    outcomes = b.evaluate("[...document.querySelectorAll('#problems-table tbody tr[data-problem]')].map(r => r.dataset.outcome)")
    order = ["solved", "unsolved", "failed", "running", "problem_error", "not_started", "unreadable"]
    check("collection: sorting by outcome groups the rows", [order.index(o) for o in outcomes] == sorted(order.index(o) for o in outcomes), str(outcomes))
    first = shown[0]
    b.evaluate(f"document.querySelector('#problems-table tr[data-problem=\"{first}\"] a').click()")
    b.wait_for("!!document.getElementById('problem-section')", timeout=10)
    section = b.evaluate("(() => { const s = document.getElementById('problem-section'); return {name: s.dataset.problem,"
                         " cells: s.querySelectorAll('td.cell').length, charts: s.querySelectorAll('.chart svg').length}; })()")
    pr = next(p for p in data["problems"] if p["name"] == first)
    check("collection: a problem's link opens its section with its grid and charts",
          section["name"] == first and section["cells"] == sum(len(s["turns"]) for s in pr["run"]["samples"]) and section["charts"] >= 1, str(section))
    fast_p = b.evaluate(CHART_JS % "fast_p")
    check("collection: the fast_p curve is drawn", fast_p and any(p["points"] > 100 and p["height"] > 0 for p in fast_p[0]["paths"]), str(fast_p))
    dist = b.evaluate(CHART_JS % "distribution")
    solved = sum(1 for p in data["problems"] if p["outcome"] == "solved" and p.get("best_speedup_eager"))
    check("collection: the speedup distribution counts every timed solved problem", dist and sum(dist[0]["bars"]) == solved, f"{dist} vs {solved}")
    b.evaluate("window.scrollTo(0, 0)")
    b.screenshot(os.path.join(shots, "report_collection.png"), max_height=2200)


VERDICTS_JS = """Object.fromEntries([...document.querySelectorAll('#verdicts-table tr[data-verdict]')].map(r =>
  [r.dataset.verdict, Object.fromEntries([...r.querySelectorAll('td[data-policy]')].map(td => [td.dataset.policy, +td.textContent]))]))"""


def test_policies(b, kagent, synth, tmp, shots):
    """Issue 49: the page said metrics.json was missing beside collect's own, showed one policy,
    folded every failure into "unsolved" and showed 0.0% for a baseline never timed."""
    coll = os.path.join(tmp, "verdicts")
    synthesize(synth, "verdicts", coll)
    data = show_report(b, kagent, coll, os.path.join(tmp, "verdicts.html"))
    source = b.evaluate("(document.getElementById('metrics-source') || {}).textContent || ''")
    check("policies: collect's metrics.json is said to be read", source == "from metrics.json", source)
    cards = b.evaluate("Object.fromEntries([...document.querySelectorAll('.policy-card')].map(c => [c.dataset.policy, c.querySelector('.v').textContent]))")
    check("policies: solved problems under each policy", cards == {"kernelbench": "2", "strict": "1"}, str(cards))
    policies = b.evaluate("[...new Set([...document.querySelectorAll('#metrics-table tr[data-policy]')].map(r => r.dataset.policy))]")
    check("policies: the metrics table has both policies, the collection's first", policies == ["kernelbench", "strict"], str(policies))
    verdicts = b.evaluate(VERDICTS_JS)
    want = {"correct": {"kernelbench": 2, "strict": 1}, "compile_error": {"kernelbench": 2, "strict": 2},
            "wrong": {"kernelbench": 1, "strict": 1}, "runtime_error": {"kernelbench": 1, "strict": 1},
            "timeout": {"kernelbench": 1, "strict": 1}, "rejected:no_kernel": {"kernelbench": 1, "strict": 1},
            "rejected:library_share": {"kernelbench": 0, "strict": 1}, "no_verdict:format": {"kernelbench": 1, "strict": 1}}
    check("policies: the verdict breakdown counts each failure kind and rejection under each policy", verdicts == want, str(verdicts))
    other = b.evaluate("(document.querySelector('#problems-table tr[data-problem=\"L1_1_flagged\"] .other-outcome') || {}).textContent || ''")
    check("policies: a problem strict rejects says so on its row", other.strip() == "strict: unsolved", other)
    b.evaluate("document.querySelector('button[data-base=\"compiled\"]').click()")
    cells = b.evaluate("[...document.querySelectorAll('#metrics-table tr[data-level]')].map(r => [...r.querySelectorAll('td')].slice(5, 11).map(td => td.textContent))")
    check("policies: fast_p over torch.compile, never timed, is n/a", cells and all(c == ["n/a"] * 6 for c in cells), str(cells))
    note = b.evaluate("(document.getElementById('untimed-note') || {}).textContent || ''")
    check("policies: the page says torch.compile was never timed", "torch.compile was never timed" in note, note)
    chart = b.evaluate("(document.querySelector('.chart[data-chart=\"fast_p\"]') || {}).textContent || ''")
    check("policies: the fast_p chart over torch.compile is n/a", "n/a" in chart and not b.evaluate(CHART_JS % "fast_p"), chart)
    b.evaluate("document.querySelector('button[data-base=\"eager\"]').click()")
    eager = b.evaluate("[...document.querySelectorAll('#metrics-table tr[data-level=\"all\"]')].map(r => r.querySelectorAll('td')[8].textContent)")
    check("policies: fast_1.0 over eager under each policy", eager == ["40.0%", "20.0%"], str(eager))
    b.evaluate("window.scrollTo(0, 0)")
    b.screenshot(os.path.join(shots, "report_policies.png"), max_height=2200)


def test_h200_run(b, kagent, tmp, shots):
    if not os.path.isdir(H200_RUN):
        print("note  no run recorded on a GPU in tests/report/data/gelu_replay_h200 (see tests/report/data/README.md)")
        return
    show_report(b, kagent, H200_RUN, os.path.join(tmp, "h200.html"))
    check_colours(b.evaluate(GRID_JS))
    charts = b.evaluate(CHART_JS % "speedup")
    check("H200 run: the speedup chart has timed points", any(p["points"] > 0 for c in charts for p in c["paths"]), str(charts))
    b.screenshot(os.path.join(shots, "report_run_h200.png"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kagent", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--screenshots", help="keep the screenshots in this folder")
    args = ap.parse_args()
    if not find_chromium():
        print("SKIPPED: no Chromium found (scripts/setup.sh installs Debian's chromium; KAGENT_CHROMIUM names another)")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="kagent-report-browser-")
    shots = args.screenshots or tmp
    os.makedirs(shots, exist_ok=True)
    try:
        with Chromium() as b:
            for test in (lambda: test_real_run(b, args.kagent, tmp, shots),
                         lambda: test_timed_run(b, args.kagent, args.synth, tmp, shots),
                         lambda: test_unfinished_runs(b, args.kagent, tmp),
                         lambda: test_collection(b, args.kagent, args.synth, tmp, shots),
                         lambda: test_policies(b, args.kagent, args.synth, tmp, shots),
                         lambda: test_h200_run(b, args.kagent, tmp, shots)):
                try:
                    test()
                except (BrowserError, subprocess.SubprocessError, KeyError, TypeError, StopIteration) as e:
                    check("no error in the browser test", False, "".join(traceback.format_exception(e)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"report browser: {check.passed} passed, {check.failed} failed")
    return 0 if check.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
