"""Where a machine's CPU goes while a command runs: /proc/stat for the whole machine (busy, idle,
steal), and /proc/<pid>/stat of every process, summed by program name, sampled every `period`
seconds. A process's CPU is counted from its first sample to its last, so a process shorter than
one period, or the part of one after its last sample, is missed: the per-program sums are lower
bounds, the machine's figures exact.

    with CpuUse(period=0.5) as use:
        subprocess.run(...)
    print(use.report())
"""

import os
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")


def _machine():
    """(busy, idle, steal, total) jiffies since boot, all CPUs."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return user + nice + system + irq + softirq, idle + iowait, steal, sum(fields[:8])


def _processes():
    """{pid: (program, utime + stime in jiffies)} for every process that can be read now."""
    out = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        # comm is in parentheses and may hold spaces; the fields after it are space-separated.
        comm = text[text.find("(") + 1:text.rfind(")")]
        rest = text[text.rfind(")") + 2:].split()
        out[int(entry.name)] = (comm, int(rest[11]) + int(rest[12]))
    return out


class CpuUse:
    def __init__(self, period=0.5):
        self.period = period
        self.by_program = {}
        self.timeline = []  # (seconds since start, busy cores over the last period)
        self._stop = threading.Event()

    def __enter__(self):
        self._t0 = time.monotonic()
        self._m0 = _machine()
        self._seen = {pid: cpu for pid, (_, cpu) in _processes().items()}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()
        self.wall = time.monotonic() - self._t0
        busy0, idle0, steal0, total0 = self._m0
        busy1, idle1, steal1, total1 = _machine()
        self.busy_s = (busy1 - busy0) / TICK
        self.idle_s = (idle1 - idle0) / TICK
        self.steal_s = (steal1 - steal0) / TICK
        return False

    def _sample(self):
        for pid, (comm, cpu) in _processes().items():
            before = self._seen.get(pid, 0)
            if cpu > before:
                self.by_program[comm] = self.by_program.get(comm, 0) + (cpu - before) / TICK
            self._seen[pid] = cpu

    def _run(self):
        last = _machine()
        while not self._stop.wait(self.period):
            self._sample()
            now = _machine()
            self.timeline.append((round(time.monotonic() - self._t0, 1),
                                  round((now[0] - last[0]) / TICK / self.period, 1)))
            last = now

    def summary(self):
        cores = os.cpu_count() or 1
        return {"wall_s": round(self.wall, 1), "cores": cores, "busy_cpu_s": round(self.busy_s, 1),
                "idle_cpu_s": round(self.idle_s, 1), "steal_cpu_s": round(self.steal_s, 1),
                "busy_cores_mean": round(self.busy_s / self.wall, 2) if self.wall else None,
                "by_program_cpu_s": {k: round(v, 1) for k, v in
                                     sorted(self.by_program.items(), key=lambda kv: -kv[1])},
                "timeline_busy_cores": self.timeline}

    def report(self, top=8):
        s = self.summary()
        progs = ", ".join(f"{k} {v:.0f}" for k, v in list(s["by_program_cpu_s"].items())[:top])
        # Busy cores by tenth of the run: where the machine was not full.
        tl = s["timeline_busy_cores"]
        tenths = []
        for i in range(10):
            part = [c for t, c in tl if i * s["wall_s"] / 10 <= t < (i + 1) * s["wall_s"] / 10]
            tenths.append(f"{sum(part) / len(part):.1f}" if part else "-")
        return (f"cpu: {s['busy_cpu_s']:.0f} CPU s busy over {s['wall_s']:.0f} s "
                f"({s['busy_cores_mean']:.1f} of {s['cores']} cores), steal {s['steal_cpu_s']:.0f} s; "
                f"by program (CPU s): {progs}; busy cores by tenth of the run: {' '.join(tenths)}")
