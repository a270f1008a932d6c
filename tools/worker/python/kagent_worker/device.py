"""The GPU as torch sees it: the description the worker reports in its hello and that keys
the baseline cache. (The DRAM bandwidth the profile compares against is measured in C++, by
the timer: timing stays there.)"""

import torch


def device_info():
    if not torch.cuda.is_available():
        return {"available": False}
    p = torch.cuda.get_device_properties(0)
    info = {
        "available": True,
        "name": p.name,
        "uuid": f"GPU-{p.uuid}" if getattr(p, "uuid", None) else "",
        "compute_capability": [p.major, p.minor],
        "sms": p.multi_processor_count,
        "memory_bytes": p.total_memory,
        "l2_bytes": getattr(p, "L2_cache_size", 0),
        "shared_memory_per_block_optin": getattr(p, "shared_memory_per_block_optin", 0),
        "shared_memory_per_sm": getattr(p, "shared_memory_per_multiprocessor", 0),
        "registers_per_sm": getattr(p, "regs_per_multiprocessor", 0),
        "max_threads_per_sm": getattr(p, "max_threads_per_multi_processor", 0),
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
    }
    return info
