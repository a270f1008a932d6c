"""pytest for the worker's Python package (tools/worker/python/kagent_worker), on the CPU.

The package is imported from the source tree; the worker embeds the same files."""

import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools", "worker", "python"))
# KernelBench problems live beside the repository, as the C++ tests find them.
KERNELBENCH = os.environ.get("KAGENT_KERNELBENCH_DIR", os.path.join(REPO, "..", "shared", "kernelbench"))
