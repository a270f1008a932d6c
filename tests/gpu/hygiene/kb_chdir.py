# Hygiene culprit (the working directory): forward computes GELU, then changes directory to /.
# The worker's working directory is its scratch folder, where an answer that builds in a relative
# folder (build_directory="cuda_extensions") must find it. Expected: left_behind os.getcwd()
# (restored); the next evaluation unaffected.
import os

import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        y = F.gelu(x)
        os.chdir("/")
        return y
