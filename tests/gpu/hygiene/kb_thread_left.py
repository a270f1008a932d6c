# Hygiene culprit (Python threads): forward starts a thread that keeps computing and returns the
# right answer. Expected: left_behind python_thread and thread (the worker is replaced:
# threads cannot be stopped from outside), charged; the next evaluation unaffected.
import threading

import torch
import torch.nn as nn
import torch.nn.functional as F


def _spin():
    x = 0
    while True:
        x += 1


class ModelNew(nn.Module):
    def forward(self, x):
        if not any(t.name == "hygiene-spinner" for t in threading.enumerate()):
            threading.Thread(target=_spin, name="hygiene-spinner", daemon=True).start()
        return F.gelu(x)
