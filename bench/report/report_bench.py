#!/usr/bin/env python3
"""kagent report on a large collection: how long `kagent report` takes to write the page, and
how long headless Chromium takes to open it until the problems table is drawn (the page's
performance mark "kagent-table-drawn", measured from navigation start). Targets for 1,000
problems: written in under 5 s, drawn in under 2 s.

The collection is synthetic (tests/report/synthetic_runs.h: real RunStore files, real feedback
template, the examples' CUDA sources; random verdicts and numbers). Usage:
  python3 bench/report/report_bench.py --kagent build/kagent --synth build/report_synth \
      [--problems 1000] [--samples 4] [--turns 4] [--repeats 3] [--out RESULTS.txt]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "report"))
from headless_chromium import Chromium, find_chromium  # noqa: E402

WRITE_TARGET_S, OPEN_TARGET_S = 5.0, 2.0


def du(path):
    total = files = 0
    for root, _, names in os.walk(path):
        for n in names:
            total += os.path.getsize(os.path.join(root, n))
            files += 1
    return total, files


def timed(cmd):
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=600)
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kagent", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--problems", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="kagent-report-bench-")
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    try:
        coll = os.path.join(tmp, "collection")
        gen = timed([args.synth, "collection", coll, "--problems", str(args.problems), "--samples", str(args.samples),
                     "--turns", str(args.turns), "--seed", "11"])
        size, files = du(coll)
        say(f"collection: {args.problems} problems x {args.samples} samples x {args.turns} turns, "
            f"{size / 1e6:.0f} MB in {files} files (generated in {gen:.1f} s); CPU cores: {os.cpu_count()}")
        page = os.path.join(tmp, "page.html")
        results = {}
        for label, drop_metrics in (("with metrics.json", False), ("without metrics.json (computed)", True)):
            if drop_metrics:
                os.remove(os.path.join(coll, "metrics.json"))
            times = [timed([args.kagent, "report", coll, "--out", page]) for _ in range(args.repeats)]
            results[label] = times
            say(f"write {label}: median {statistics.median(times):.2f} s, max {max(times):.2f} s over {len(times)} runs; "
                f"page {os.path.getsize(page) / 1e6:.1f} MB")
        write_max = max(max(t) for t in results.values())

        open_times = []
        if not find_chromium():
            say("open: SKIPPED (no Chromium)")
        else:
            with Chromium(timeout=120) as b:
                for _ in range(args.repeats):
                    t0 = time.monotonic()
                    b.open("file://" + page)
                    b.wait_for("document.body.dataset.drawn || document.body.dataset.error")
                    wall = time.monotonic() - t0
                    mark = b.evaluate("performance.getEntriesByName('kagent-table-drawn')[0].startTime") / 1000
                    rows = b.evaluate("document.querySelectorAll('#problems-table tbody tr[data-problem]').length")
                    open_times.append(mark)
                    say(f"open: table drawn {mark:.2f} s after navigation start ({rows} rows drawn, "
                        f"{wall:.2f} s from the navigate command to seeing it)")
                version = b.send("Browser.getVersion", session=False).get("product", "?")
            say(f"open: median {statistics.median(open_times):.2f} s, max {max(open_times):.2f} s ({version}, headless)")
        say()
        say(f"target: written in under {WRITE_TARGET_S:.0f} s: {'met' if write_max < WRITE_TARGET_S else 'MISSED'} "
            f"(slowest {write_max:.2f} s)")
        if open_times:
            say(f"target: drawn in under {OPEN_TARGET_S:.0f} s: {'met' if max(open_times) < OPEN_TARGET_S else 'MISSED'} "
                f"(slowest {max(open_times):.2f} s)")
        return 0 if write_max < WRITE_TARGET_S and (not open_times or max(open_times) < OPEN_TARGET_S) else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
