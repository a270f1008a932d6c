# Adversarial, KernelBench format: forward opens a TCP connection to the test's listener
# (port in KAGENT_SANDBOX_TEST_PORT), ignores the failure and returns the right answer.
# Expected: runtime_error, reason sandbox_network; the listener sees no connection.
import os
import socket

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x):
        port = os.environ.get("KAGENT_SANDBOX_TEST_PORT")
        if port:
            try:
                with socket.create_connection(("127.0.0.1", int(port)), timeout=1) as s:
                    s.sendall(b"x")
            except OSError:
                pass
        return torch.nn.functional.gelu(x)
