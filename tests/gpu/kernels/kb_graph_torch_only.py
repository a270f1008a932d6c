import torch
import torch.nn as nn
import torch.nn.functional as F

# A real-answer pattern (CUDA-L1): no kernel of its own, torch's GELU captured in a CUDA graph
# and replayed. Rejected (no_kernel) under both policies; the worker that ran it must stay
# clean for the next evaluation (the capture registers the CUDA generator with the graph).
class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.graph = None

    def forward(self, x):
        if self.graph is None or self.static_x.shape != x.shape:
            self.static_x = x.clone()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                F.gelu(self.static_x)
            torch.cuda.current_stream().wait_stream(side)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.static_out = F.gelu(self.static_x)
        self.static_x.copy_(x)
        self.graph.replay()
        return self.static_out.clone()
