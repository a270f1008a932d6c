"""The trials' CPU draws as files: the format the pool's draw process writes (draw_ahead.py) and
the worker's side that reads them instead of drawing (`take`, called by problem.py).

A draw is one file per trial seed, FOLDER/<sha256 of the problem text>-<seed>.draw: a header of
the values (JSON), then each tensor's bytes, page-aligned. A lock file beside it, flocked by the
drawer while it draws, lets a worker wait for a draw in progress instead of drawing it again.
KAGENT_DRAW_DIR lists the pool's folders, ':'-separated (one per draw process; a problem is drawn
by one of them, and its lock file says which)."""

import fcntl
import json
import mmap
import os
import time

import torch

MAGIC = b"KADRAW01"
_ALIGN = 4096
# How long a worker waits for the draws of one problem's trials that this process has begun
# before drawing them itself: the largest draws take about 2 s each on an H200 host
# (bench/realworld/RESULTS.md, draw-probe). One bound for all of a problem's trials (the caller's
# `deadline`), not one per trial: five trials would otherwise hold a worker up to 150 s.
TAKE_WAIT_S = 30.0
_SCALARS = (bool, int, float, str, type(None))


def draw_base(folder, sha256, seed):
    return os.path.join(folder, f"{sha256}-{int(seed)}")


def shareable(values):
    """Why `values` cannot be written and read back as the same objects, or None."""
    for v in values:
        if isinstance(v, torch.Tensor):
            if type(v) is not torch.Tensor or v.device.type != "cpu" or v.layout != torch.strided:
                return "a tensor that is not a plain CPU tensor"
            if not v.is_contiguous() or v.requires_grad or v.is_conj() or v.is_neg() or v.is_quantized:
                return "a tensor with strides, a gradient or a view bit"
        elif not isinstance(v, _SCALARS):
            return f"a value of type {type(v).__name__}"
    return None


def write_draw(path, values):
    """`values` (get_inputs()'s list) at `path`: a header of the values, then each tensor's
    bytes, page-aligned. Written under a temporary name and renamed: a reader sees all or none."""
    entries, offset, blobs = [], 0, []
    for v in values:
        if isinstance(v, torch.Tensor):
            offset = -(-offset // _ALIGN) * _ALIGN
            entries.append({"tensor": {"dtype": str(v.dtype).removeprefix("torch."), "shape": list(v.shape),
                                       "offset": offset, "nbytes": v.nbytes}})
            blobs.append((offset, v))
            offset += v.nbytes
        else:
            entries.append({"value": v})
    header = json.dumps({"values": entries}).encode()
    start = -(-(len(MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(MAGIC + len(header).to_bytes(8, "little") + header)
        for off, v in blobs:
            f.seek(start + off)
            if v.nbytes:
                f.write(memoryview(v.reshape(-1).view(torch.uint8).numpy()))
        f.truncate(start + offset)
    os.rename(tmp, path)


def read_draw(path):
    """The values write_draw wrote, the tensors on a private (copy-on-write) mapping of the file."""
    with open(path, "rb") as f:
        head = f.read(len(MAGIC) + 8)
        if len(head) != len(MAGIC) + 8 or head[:len(MAGIC)] != MAGIC:
            raise ValueError(f"not a draw: {path}")
        size = int.from_bytes(head[len(MAGIC):], "little")
        header = json.loads(f.read(size))
        start = -(-(len(MAGIC) + 8 + size) // _ALIGN) * _ALIGN
        length = os.fstat(f.fileno()).st_size
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) if length > start else None
    values = []
    for e in header["values"]:
        if "tensor" not in e:
            values.append(e["value"])
            continue
        t = e["tensor"]
        dtype = getattr(torch, t["dtype"])
        count = t["nbytes"] // dtype.itemsize
        if t["nbytes"] == 0:
            values.append(torch.empty(t["shape"], dtype=dtype))
            continue
        if start + t["offset"] + t["nbytes"] > length:
            raise ValueError(f"a draw cut short: {path}")
        x = torch.frombuffer(mm, dtype=dtype, count=count, offset=start + t["offset"])
        values.append(x.view(t["shape"]))
    return values


def take_deadline(wait_s=None):
    """The `deadline` of take() for draws that begin now (TAKE_WAIT_S when `wait_s` is None)."""
    return time.monotonic() + (TAKE_WAIT_S if wait_s is None else wait_s)


def take(sha256, seed, deadline=None):
    """The trial inputs of the problem text `sha256` for `seed` as the drawer drew them, or None
    (no drawer, not drawn, not shareable, or not done by `deadline`, a time.monotonic() value,
    take_deadline() when None: the caller draws). Past the deadline it still takes a finished draw."""
    for folder in filter(None, os.environ.get("KAGENT_DRAW_DIR", "").split(":")):
        base = draw_base(folder, sha256, seed)
        try:
            lock = os.open(base + ".lock", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue  # not this process's
        return _taken(base, lock, take_deadline() if deadline is None else deadline)
    return None


def _taken(base, lock, deadline):
    """The draw at `base` once the drawer that holds `lock` is done with it, by `deadline`."""
    try:  # the drawer holds it while it draws this seed: wait for the draw
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return None
                time.sleep(0.01)
    finally:
        os.close(lock)
    try:
        return read_draw(base + ".draw")
    except (OSError, ValueError, KeyError, TypeError, RuntimeError):
        return None
