"""Reads a kagent collection folder for the GPU scripts' summaries (gpu_collect.sh,
gpu_collect_2gpu.sh): every trajectory, with the name of its problem."""
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
