"""How long the GPU ran kernels while a command ran: NVML's utilization.gpu (the share of each
sample period in which one kernel or more was executing, however few SMs it used), sampled every
`period_ms` by `nvidia-smi -lms` and summed over time. Beside the wall time it says how much of a
collection's time the GPU worked at all; the rest went to compiles, host work and waits.

    with GpuBusy(gpu=0) as busy:
        subprocess.run(...)
    print(busy.report())
"""

import subprocess
import threading
import time


class GpuBusy:
    def __init__(self, gpu=0, period_ms=200):
        self.gpu, self.period_ms = gpu, period_ms
        self.samples = []  # (monotonic time, percent)
        self._proc = None
        self._reader = None
        self._t0 = self._t1 = None

    def __enter__(self):
        self._t0 = time.monotonic()
        try:
            self._proc = subprocess.Popen(
                ["nvidia-smi", "-i", str(self.gpu), "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                 "-lms", str(self.period_ms)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            return self
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self):
        for line in self._proc.stdout:
            try:
                self.samples.append((time.monotonic(), float(line.strip())))
            except ValueError:
                pass

    def __exit__(self, *exc):
        self._t1 = time.monotonic()
        if self._proc:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._reader.join(timeout=5)
        return False

    def wall_seconds(self):
        return (self._t1 or time.monotonic()) - self._t0

    def busy_seconds(self):
        """Each sample's percent times the time since the one before it (the first: one period)."""
        total, last = 0.0, self._t0
        for t, pct in self.samples:
            if t > (self._t1 or t):
                break
            total += pct / 100.0 * (t - last)
            last = t
        return total

    def summary(self):
        wall = self.wall_seconds()
        busy = self.busy_seconds()
        return {"wall_seconds": round(wall, 1), "kernel_busy_seconds": round(busy, 1),
                "kernel_busy_share": round(busy / wall, 3) if wall else None, "samples": len(self.samples)}

    def report(self):
        if not self.samples:
            return "gpu: kernel-busy time unknown (nvidia-smi gave no samples)"
        s = self.summary()
        return (f"gpu: kernels ran {s['kernel_busy_seconds']:.1f} s of the {s['wall_seconds']:.1f} s "
                f"({100 * s['kernel_busy_share']:.0f}%; NVML utilization, {s['samples']} samples)")
