# Hygiene culprit (CUDA generator, graph-safe state): forward tries to capture a CUDA graph,
# the capture fails (a synchronisation inside it), and it falls back to eager PyTorch, as real
# answers do. The failed capture_end leaves the default CUDA generator in graph-capture mode:
# without the worker's check every later random draw in the process raised "Offset increment
# outside graph capture encountered unexpectedly". Expected: left_behind cuda_generator
# (restored); the next evaluation unaffected.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.stream(side):
            try:
                graph.capture_begin()
                F.gelu(x)
                torch.cuda.synchronize()  # not allowed while capturing: invalidates the capture
                graph.capture_end()
            except RuntimeError:
                try:
                    graph.capture_end()  # ends the invalidated capture, raising before the generator leaves capture mode
                except RuntimeError:
                    pass
        torch.cuda.current_stream().wait_stream(side)
        return F.gelu(x)
