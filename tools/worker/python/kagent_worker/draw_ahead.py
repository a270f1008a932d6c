"""The trials' CPU draws made ahead, once per problem text, by a process of their own.

KernelBench draws a correctness trial's inputs on the CPU from its seed (problem.py,
kernelbench_inputs): seconds of torch's CPU generator for a level-1 or level-2 problem at its
official size, which a worker spent in every evaluation's `prefetch` while answers queued for
it (14 s of a worker's 92 s over the leaderboard, bench/realworld/RESULTS.md). The generator is
the process's one and the worker's main thread seeds and draws from it too, so the draws cannot
move to a thread of the worker without changing the numbers. They move to this process instead
(`kagent-worker --draw-ahead FOLDER`, started by the evaluation pool, evaluation/draw_ahead.h):
the pool names each problem as its answer enters the pipeline (before its compile), this process
draws the problem's trial inputs from the same seeds and writes them to FOLDER, and a worker
whose evaluation needs them reads them (take) instead of drawing. The numbers are the same:
the same file run fresh, the same seeds, the same torch.

The files' format and the worker's reading are draw_files.py. Only the drawer writes FOLDER: it
is its sandbox's scratch folder, which the workers' sandboxes can read and not write, so a
candidate cannot plant the next candidate's inputs. A
worker that finds nothing (not drawn yet, not shareable, no drawer) draws as before; one that
finds the draw in progress waits for it, up to a bound.

Protocol: JSON lines on fd 3 ({"op": "draw", "path", "seed", "trials"}; {"op": "drop", "path"}),
{"ready": true} on fd 4 once started, then one reply line per draw ({"path", "drawn": files,
"bytes", "seconds"} or {"path", "skipped": why})."""

import fcntl
import json
import os
import select
import time

import torch

from kagent_worker import problem as problems
from kagent_worker.draw_files import shareable, draw_base, write_draw

# Problems whose trial inputs are smaller are left to the worker: tens of milliseconds of its own
# generator against a file written, read and copied. The drawers drew all 133 leaderboard texts
# once (2 processes, 59 s of CPU on a host that was short of cores), most of them that small.
MIN_TRIAL_BYTES = 16 << 20


class _Drawer:
    """The drawing process's state: what is asked and not yet drawn (in order), what is drawn and
    in use, and what is drawn and no longer in use (kept, oldest first, until its room is needed:
    `kagent solve`'s next turn and a server's next request for a problem take it again instead of
    a new draw). Each draw request gets one reply."""

    def __init__(self, folder, budget_bytes, request_fd, reply_fd, min_trial_bytes=MIN_TRIAL_BYTES):
        self.folder = folder
        self.budget = budget_bytes
        self.min_trial_bytes = min_trial_bytes
        self.request_fd = request_fd
        self.reply_fd = reply_fd
        self.buffer = b""
        self.pending = {}  # path -> (seed, trials), oldest first
        self.drawn = {}  # path -> [files], in use
        self.idle = {}  # path -> [files], dropped by the pool: kept while there is room, oldest first
        self.sizes = {}  # path -> bytes on disk (drawn and idle)
        self.closed = False

    def used(self):
        return sum(self.sizes.values())

    def reply(self, obj):
        os.write(self.reply_fd, (json.dumps(obj) + "\n").encode())

    def read(self, timeout):
        """Reads the messages that arrive within `timeout` (None: until one does)."""
        ready, _, _ = select.select([self.request_fd], [], [], timeout)
        if not ready:
            return
        chunk = os.read(self.request_fd, 1 << 16)
        if not chunk:
            self.closed = True
            return
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            if line.strip():
                self.handle(json.loads(line))

    def handle(self, msg):
        path = msg.get("path", "")
        if msg.get("op") == "draw":
            if path in self.idle:  # drawn before and still here: in use again, nothing drawn
                self.drawn[path] = self.idle.pop(path)
            if path in self.drawn:
                self.reply({"path": path, "drawn": len(self.drawn[path]), "bytes": 0, "seconds": 0, "kept": True})
            elif path not in self.pending:
                self.pending[path] = (int(msg.get("seed", 42)), int(msg.get("trials", 5)))
        elif msg.get("op") == "drop":
            if self.pending.pop(path, None) is not None:
                self.reply({"path": path, "skipped": "dropped before it was drawn"})
            if path in self.drawn:
                self.idle[path] = self.drawn.pop(path)

    def evict(self, path):
        for f in self.idle.pop(path, []):
            for suffix in (".draw", ".lock"):
                try:
                    os.unlink(f + suffix)
                except OSError:
                    pass
        self.sizes.pop(path, None)

    def draw(self, path, seed, trials):
        """Draws `path`'s trials; True when done or skipped, False when it waits for room."""
        start = time.monotonic()
        try:
            p = problems.Problem(path)
            if p.trial_inputs_device() != "cpu":
                self.reply({"path": path, "skipped": "inputs drawn on the GPU"})
                return True
            per_trial = p.trial_input_bytes()
            if per_trial is None:
                self.reply({"path": path, "skipped": "get_inputs() does not run on meta: its sizes are not known"})
                return True
            if per_trial < self.min_trial_bytes:
                self.reply({"path": path, "skipped": f"small: {per_trial} bytes a trial, the worker draws them"})
                return True
            estimate = per_trial * trials
        except Exception as exc:  # noqa: BLE001 - the worker reports the problem's errors itself
            self.reply({"path": path, "skipped": f"{type(exc).__name__}: {exc}"[:300]})
            return True
        while self.idle and self.used() + estimate > self.budget:
            self.evict(next(iter(self.idle)))  # the oldest no longer in use
        if self.used() > 0 and self.used() + estimate > self.budget:
            return False
        seeds = p.trial_seeds(seed, trials)
        bases = [draw_base(self.folder, p.sha256, s) for s in seeds]
        self.drawn[path] = bases
        self.sizes[path] = 0
        locks = []
        try:
            for base in bases:  # every seed's lock first: a worker waits for all of them, not the first
                fd = os.open(base + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
                fcntl.flock(fd, fcntl.LOCK_EX)
                locks.append(fd)
            for base, s, fd in zip(bases, seeds, locks):
                if not os.path.exists(base + ".draw"):
                    problems.kernelbench_seed(s)
                    values = list(p._call("get_inputs"))
                    why = shareable(values)
                    if why:
                        self.reply({"path": path, "skipped": why})
                        return True
                    write_draw(base + ".draw", values)
                    self.sizes[path] += os.path.getsize(base + ".draw")
                fcntl.flock(fd, fcntl.LOCK_UN)
        except Exception as exc:  # noqa: BLE001
            self.reply({"path": path, "skipped": f"{type(exc).__name__}: {exc}"[:300]})
            return True
        finally:
            for fd in locks:
                os.close(fd)
        self.reply({"path": path, "drawn": len(bases), "bytes": self.sizes[path],
                    "seconds": round(time.monotonic() - start, 3)})
        return True

    def run(self):
        while not self.closed:
            self.read(0 if self.pending else None)
            if self.closed or not self.pending:
                continue
            path, (seed, trials) = next(iter(self.pending.items()))
            if self.draw(path, seed, trials):
                self.pending.pop(path, None)
            else:
                self.reply({"waiting": "room", "path": path})  # not stuck: the pool's watch knows
                self.read(None)  # no room: wait for a drop


def serve(folder, budget_bytes, request_fd=3, reply_fd=4, min_trial_bytes=MIN_TRIAL_BYTES):
    """The drawer's loop, until the pool closes fd 3."""
    torch.set_num_threads(1)  # the draws are serial; the cores are the compilers' and workers'
    drawer = _Drawer(folder, int(budget_bytes), request_fd, reply_fd, min_trial_bytes)
    drawer.reply({"ready": True})  # up: an end from now on is news, one before it a start that failed
    drawer.run()
    return 0
