"""pytest for the worker's Python package (tools/worker/python/kagent_worker), on the CPU.

The package is imported from the source tree; the worker embeds the same files."""

import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools", "worker", "python"))
# KernelBench problems live beside the repository, as the C++ tests find them.
KERNELBENCH = os.environ.get("KAGENT_KERNELBENCH_DIR", os.path.join(REPO, "..", "shared", "kernelbench"))

# One temporary folder for the whole session, removed at its end: pytest's tmp_path folders,
# torch's inductor cache and anything a test writes to the temp folder go there, so nothing is
# left in $TMPDIR (tests/tmpdir_check.cmake checks).
import shutil
import tempfile

SESSION_TMP = tempfile.mkdtemp(prefix="kagent-pytest-")
os.environ["TMPDIR"] = SESSION_TMP
tempfile.tempdir = SESSION_TMP
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(SESSION_TMP, "inductor")


def pytest_configure(config):
    config.option.basetemp = os.path.join(SESSION_TMP, "basetemp")


def pytest_unconfigure(config):
    shutil.rmtree(SESSION_TMP, ignore_errors=True)
