# Hygiene culprit (graphs kept alive): forward captures a CUDA graph correctly (with a 1 GiB
# work buffer) and keeps the graph and its buffer where nothing frees them. Expected:
# left_behind gpu_memory (the worker is replaced, not charged: its verdict is its own); the next
# evaluation unaffected.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        keep = getattr(torch.cuda, "_kagent_hygiene_keep", None)
        if keep is None:
            keep = torch.cuda._kagent_hygiene_keep = []
        if not keep:
            static_in = x.clone()
            work = torch.empty(1 << 28, device=x.device)  # 1 GiB
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                F.gelu(static_in)  # warm-up outside the capture
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_out = F.gelu(static_in)
            keep.extend([graph, static_in, static_out, work])
        return F.gelu(x)
