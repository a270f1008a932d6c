# Hygiene culprit (allocator settings): forward changes the caching allocator's settings and
# halves the process's memory fraction. Expected: left_behind allocator_settings (the worker is
# replaced: settings cannot be read back whole) and the memory fraction (restored); the next
# evaluation unaffected.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        y = F.gelu(x)
        torch.cuda.memory._set_allocator_settings("garbage_collection_threshold:0.6")
        torch.cuda.set_per_process_memory_fraction(0.5)
        return y
