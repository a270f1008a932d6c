"""Headless Chromium driven through the DevTools protocol over a pipe (--remote-debugging-pipe:
commands on the child's fd 3, replies on its fd 4, each message NUL-terminated), with the
standard library only. Used by the report's browser test and its benchmark.

The browser runs in its own process group with a fresh profile folder, dies with this process
(PR_SET_PDEATHSIG), has a time limit on every command and is killed on close()."""

import base64
import ctypes
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium():
    """The browser to run: $KAGENT_CHROMIUM, else the first of CANDIDATES on PATH, else None."""
    explicit = os.environ.get("KAGENT_CHROMIUM")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


def _high_fd(fd):
    """The same pipe end on a descriptor >= 10, so it cannot collide with fds 3 and 4."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Chromium:
    def __init__(self, binary=None, width=1400, height=1000, timeout=60.0):
        self.binary = binary or find_chromium()
        if not self.binary:
            raise BrowserError("no Chromium found (install Debian's chromium, or set KAGENT_CHROMIUM)")
        self.timeout = timeout
        self.width, self.height = width, height
        self.profile = tempfile.mkdtemp(prefix="kagent-chromium-")
        cmd_r, self._cmd_w = map(_high_fd, os.pipe())   # we write commands, the browser reads fd 3
        self._rep_r, rep_w = map(_high_fd, os.pipe())   # the browser writes fd 4, we read replies
        libc = ctypes.CDLL(None, use_errno=True)

        def child_setup():
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the test
            os.dup2(cmd_r, 3)
            os.dup2(rep_w, 4)

        args = [self.binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                "--disable-background-networking", "--disable-component-update", "--mute-audio",
                "--hide-scrollbars", f"--window-size={width},{height}", f"--user-data-dir={self.profile}",
                "about:blank"]
        # The browser's own log goes to a file: a full pipe would block it.
        self.log_path = os.path.join(self.profile, "chromium.log")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(args, preexec_fn=child_setup, close_fds=False, start_new_session=True,
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        os.close(cmd_r)
        os.close(rep_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []          # every event received, in order: (method, params, sessionId)
        self.session = None
        self.target = None
        self.exceptions = []      # uncaught exceptions and console errors of the page

    # ---- protocol ----
    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in time")
            ready, _, _ = select.select([self._rep_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._rep_r, 1 << 20)
            if not chunk:
                with open(self.log_path, "rb") as log:
                    tail = log.read()[-2000:].decode(errors="replace")
                raise BrowserError("Chromium closed its pipe: " + tail)
            self._buffer += chunk
        msg, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(msg)

    def _note_event(self, msg):
        method, params = msg.get("method"), msg.get("params", {})
        self.events.append((method, params, msg.get("sessionId")))
        if method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.exceptions.append((d.get("exception") or {}).get("description") or d.get("text"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.exceptions.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))

    def send(self, method, params=None, session=True, timeout=None):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._cmd_w, data):]
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._note_event(reply)

    def wait_event(self, method, timeout=None):
        for m, params, _ in self.events:
            if m == method:
                self.events.remove((m, params, _))
                return params
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = self._read_message(deadline)
            if msg.get("method") == method:
                return msg.get("params", {})
            self._note_event(msg)

    # ---- pages ----
    def open(self, url):
        """A new tab at `url`; returns once its load event fired."""
        if self.target:  # one page at a time: a page left behind in the background is throttled
            self.send("Target.closeTarget", {"targetId": self.target}, session=False)
        self.session = None
        target = self.target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        for domain in ("Page", "Runtime"):
            self.send(domain + ".enable")
        self.send("Page.bringToFront")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression, await_promise=False):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": await_promise})
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise BrowserError(f"{expression[:80]}: {(d.get('exception') or {}).get('description') or d.get('text')}")
        return r.get("result", {}).get("value")

    def wait_for(self, expression, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.02)
        raise BrowserError("timed out waiting for " + expression)

    def screenshot(self, path, full_page=True, max_height=8000):
        """A PNG of the page from its top: the whole page (up to max_height pixels) or the viewport."""
        params = {"format": "png"}
        if full_page:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": self.width, "height": min(size["height"], max_height), "scale": 1}
            params["captureBeyondViewport"] = True
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.send("Page.captureScreenshot", params)["data"]))

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", session=False, timeout=5)
                except (BrowserError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            try:  # the browser and whatever helper it left in its process group
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if self.proc.poll() is None:
                self.proc.wait()
            for fd in (self._cmd_w, self._rep_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
