"""Page-locked host copies that a fork() of the worker neither copies nor shares.

Every evaluation copies a problem's kept trial draws (problem.py, _host_draw) to the GPU, and a
copy from pageable memory goes through a staging buffer at a fraction of the link's speed: the
five trials of a large problem cost tens of milliseconds of a warm evaluation. pin_memory() made
those copies fast, but a fork() of the worker (a candidate's, a subprocess's) then copied the
pinned pages at once, and a fork-bombing candidate held the worker in fork() for minutes with
the GPU's timing lock shared (chaos on an H200, 2026-11-26). Here the memory is an anonymous
mapping marked MADV_DONTFORK, then registered with CUDA (cudaHostRegister): a child process gets
no such mapping at all, so a fork costs nothing for it, and the copies to the GPU are direct."""

import ctypes
import mmap
import weakref

import torch


def dontfork_copy(x):
    """A copy of the CPU tensor `x` (contiguous, same dtype and shape) in memory of its own that
    child processes do not inherit (MADV_DONTFORK). Unmapped when the last tensor on it goes."""
    buf = mmap.mmap(-1, x.nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf.madvise(mmap.MADV_DONTFORK)
    # frombuffer keeps `buf` alive as long as the storage: the mapping outlives every view.
    out = torch.frombuffer(buf, dtype=x.dtype, count=x.numel()).view(x.shape)
    out.copy_(x)
    return out


def _unregister(cudart, ptr):
    if int(cudart.cudaHostUnregister(ptr)) != 0:
        _clear_cuda_error()


def _clear_cuda_error():
    """Resets the CUDA runtime's last error after a failed call of ours, so that the worker's
    next cudaGetLastError does not blame the candidate for it (torch.cuda.cudart() has no
    cudaGetLastError: the runtime already loaded, found by its soname)."""
    for name in ("libcudart.so.13", "libcudart.so"):
        try:
            ctypes.CDLL(name).cudaGetLastError()
            return
        except (OSError, AttributeError):
            continue


def page_locked_copy(x):
    """`x` in page-locked memory that forks do not inherit, with the same numbers; `x` itself
    where that does not apply or fails (no CUDA, not a plain contiguous CPU tensor, no memory
    to lock): the page-locking only makes copies faster."""
    if (not isinstance(x, torch.Tensor) or x.device.type != "cpu" or x.layout != torch.strided
            or not x.is_contiguous() or x.requires_grad or x.numel() == 0 or not torch.cuda.is_available()):
        return x
    try:
        out = dontfork_copy(x)
        cudart = torch.cuda.cudart()
        ptr = out.data_ptr()
        if int(cudart.cudaHostRegister(ptr, out.nbytes, 0)) != 0:
            _clear_cuda_error()
            return x
        # Unregistered when this tensor goes, before its storage (and so the mapping) is freed:
        # the kept draw is this tensor; the GPU gets copies of it, never views.
        weakref.finalize(out, _unregister, cudart, ptr)
        return out
    except Exception:  # noqa: BLE001 - page-locking is an optimisation
        return x
