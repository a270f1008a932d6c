"""The device description on a machine without a GPU."""

import torch

from kagent_worker.device import device_info


def test_no_gpu_is_reported_as_unavailable():
    info = device_info()
    if torch.cuda.is_available():
        assert info["available"] and info["name"] and info["sms"] > 0
    else:
        assert info == {"available": False}
