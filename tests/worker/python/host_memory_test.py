"""Page-locked copies of the trials' kept draws: the same numbers, in memory a fork does not inherit."""

import os

import pytest
import torch

from kagent_worker import host_memory


def mapping_of(ptr, maps="/proc/self/smaps"):
    """The smaps entry (header and fields) of the mapping that holds address `ptr`."""
    entry, inside = [], False
    with open(maps) as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                lo, hi = (int(v, 16) for v in head.split("-"))
                if inside:
                    break
                inside = lo <= ptr < hi
                entry = [line]
            elif inside:
                entry.append(line)
    return entry if inside else None


# The child reads /proc and writes to a pipe only: fork()'s warning about threads does not apply.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_dontfork_copy_has_the_same_numbers_in_a_mapping_children_do_not_get():
    x = torch.randn(64, 33)
    y = host_memory.dontfork_copy(x)
    assert y.dtype == x.dtype and y.shape == x.shape and y.is_contiguous()
    assert torch.equal(x, y) and y.data_ptr() != x.data_ptr()
    entry = mapping_of(y.data_ptr())
    assert entry is not None
    flags = next(line for line in entry if line.startswith("VmFlags:")).split()[1:]
    assert "dc" in flags  # VM_DONTCOPY: fork() neither copies nor shares it

    # The child's own map has nothing at that address.
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, b"absent" if mapping_of(y.data_ptr(), "/proc/self/maps") is None else b"present")
        os._exit(0)
    os.close(w)
    said = os.read(r, 16)
    os.close(r)
    os.waitpid(pid, 0)
    assert said == b"absent"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool])
def test_every_dtype_copies_exactly(dtype):
    x = (torch.randn(5, 7) * 10).to(dtype)
    assert torch.equal(host_memory.dontfork_copy(x), x)


def test_what_is_not_a_plain_cpu_tensor_is_returned_as_it_is():
    for x in (3, "s", torch.randn(4, 4).t(), torch.empty(0), torch.randn(2, requires_grad=True)):
        assert host_memory.page_locked_copy(x) is x


@pytest.mark.skipif(torch.cuda.is_available(), reason="covers the machine without CUDA")
def test_without_cuda_the_draw_stays_as_drawn():
    x = torch.randn(8)
    assert host_memory.page_locked_copy(x) is x


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA to register the memory")
def test_with_cuda_the_copy_is_page_locked_and_copies_to_the_gpu_exactly():
    x = torch.randn(1 << 20)
    y = host_memory.page_locked_copy(x)
    assert y is not x and y.is_pinned() and torch.equal(y, x)
    assert torch.equal(y.to("cuda", copy=True).cpu(), x)
    ptr = y.data_ptr()
    del y  # unregistered, then unmapped
    assert mapping_of(ptr) is None
