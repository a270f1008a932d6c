"""Reads a kagent collection folder for the GPU scripts' summaries (gpu_collect.sh,
gpu_collect_2gpu.sh, bench/fidelity, bench/realworld, the chaos test): every trajectory, with
the name of its problem."""
import glob
import json
import os


def trajectories(collection):
    """Yields (problem name, trajectory) for every line of every problems/*/trajectories.jsonl."""
    for path in sorted(glob.glob(os.path.join(collection, "problems", "*", "trajectories.jsonl"))):
        name = os.path.basename(os.path.dirname(path))
        with open(path) as f:
            for line in f:
                if line.strip():
                    yield name, json.loads(line)


def verdict(ev):
    """(status, reason) of an eval record; ("none", "") where there is none."""
    return (ev or {}).get("status", "none"), (ev or {}).get("reason", "")


def lock_wait(ev):
    """Seconds an eval record waited for the GPU's timing lock (0 where it says none)."""
    return ((ev or {}).get("isolation") or {}).get("timing_lock_wait_seconds") or 0


def first_evals(collection):
    """{problem: the eval record of its first turn} (None where that turn has no record); with one
    sample of one turn per problem, as replayed answers are, each problem's verdict."""
    out = {}
    for name, t in trajectories(collection):
        turns = t.get("turns") or []
        out[name] = turns[0].get("eval") if turns else None
    return out
