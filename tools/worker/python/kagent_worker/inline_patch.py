"""torch.utils.cpp_extension.load_inline and load, replaced while a KernelBench answer loads.

A call whose normalised arguments match an extension kagent already compiled (its key, see
inline_calls.py) gets a module whose attributes are the compiled ops, called through the
dispatcher; ModelNew runs unchanged. Any other call goes to torch's own function, and the
record says why. A call with an option torch does not know is the candidate's error, said
in one line.
"""

import contextlib
import difflib
import inspect
import time
import types

from kagent_worker import inline_calls
from kagent_worker.loading import ExtensionBuildError, KagentError


def _unknown_option_error(fn_name, real, args, kwargs):
    """The KagentError for a call torch's function would refuse, or None when it binds."""
    sig = inspect.signature(real)
    try:
        sig.bind(*args, **kwargs)
        return None
    except TypeError as exc:
        known = list(sig.parameters)
        unknown = [k for k in kwargs if k not in sig.parameters]
        if unknown:
            close = difflib.get_close_matches(unknown[0], known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            import torch
            message = (f"{fn_name}() got an option torch {torch.__version__} does not know: "
                       f"{unknown[0]}{hint}")
        else:
            message = f"{fn_name}() refused its arguments: {exc}"
        return KagentError("load_inline_option", message)


# The C++ side's GpuTimingLock::kTurnstilePatience, where the worker gives none.
TURNSTILE_PATIENCE_S = 5.0


@contextlib.contextmanager
def _gpu_lock_let_go(fd, turnstile=None, patience_s=TURNSTILE_PATIENCE_S):
    """torch's build is a minute on the CPU: the worker's shared hold of the GPU's timing lock
    would keep every sibling worker from timing that long. Let go meanwhile (this process's
    kernels finished first), and taken shared again before the extension's code can run,
    through the lock's turnstile as the worker takes it (gpu_timing_lock.h: a sibling waiting to
    time is not overtaken)."""
    if fd is None:
        yield
        return
    import fcntl
    import torch
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()
    fcntl.flock(fd, fcntl.LOCK_UN)
    try:
        yield
    finally:
        # As the worker's own shared takings: at most `patience_s` in the turnstile's queue
        # (GpuTimingLock::kTurnstilePatience, sent by the worker), then beside a waiter stuck
        # behind a long holder.
        through = False
        if turnstile is not None:
            give_up = time.monotonic() + patience_s
            while True:
                try:
                    fcntl.flock(turnstile, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    through = True
                    break
                except BlockingIOError:
                    if time.monotonic() >= give_up:
                        break
                    time.sleep(0.01)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        finally:
            if through:
                fcntl.flock(turnstile, fcntl.LOCK_UN)


def _register_through_binding(hit):
    """An extension whose main.cpp is a binding shared by answers (compiler/shared_binding.h):
    the library is cuda.cu alone with a getter per function (kagent_fn_<i>), and the binding's
    kagent_register makes the functions ops of hit["op_namespace"], as TORCH_LIBRARY would."""
    import ctypes
    import torch
    library = ctypes.CDLL(hit["library"])  # loaded as torch.ops.load_library loads, and kept
    torch.ops.loaded_libraries.add(hit["library"])
    functions = hit["functions"]
    addresses = []
    for i in range(len(functions)):
        getter = getattr(library, f"kagent_fn_{i}")
        getter.restype = ctypes.c_void_p
        addresses.append(getter())
    binding = ctypes.CDLL(hit["binding"])
    register = binding.kagent_register
    register.restype = ctypes.c_char_p
    register.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                         ctypes.POINTER(ctypes.c_void_p)]
    names = (ctypes.c_char_p * len(functions))(*[f.encode() for f in functions])
    fns = (ctypes.c_void_p * len(functions))(*addresses)
    error = register(hit["op_namespace"].encode(), len(functions), names, fns)
    if error:
        raise KagentError("candidate_load_error", f"kagent's binding could not register {hit['op_namespace']}: "
                                                  f"{error.decode(errors='replace')}")


def _build_error_text(name, why):
    """torch's words for an extension that did not build, with why."""
    return f"Error building extension '{name}': {why}"


class InlineExtensions:
    """Context manager: while it is open, load_inline/load resolve to kagent's builds.

    prebuilt: [{"key", "library", "op_namespace", "functions"}] from the orchestrator's compile;
    reasons: {extension name: why kagent did not build it}, for the record of a fallback;
    gpu_lock_fd: the GPU's timing lock, held shared by the worker (None: none): let go while
    torch builds (worker/protocol/gpu_timing_lock.h), so that sibling workers time meanwhile;
    gpu_turnstile_fd: that lock's turnstile (None: none), taken around taking the lock again.
    """

    def __init__(self, prebuilt=(), reasons=None, gpu_lock_fd=None, gpu_turnstile_fd=None,
                 gpu_turnstile_patience_s=TURNSTILE_PATIENCE_S):
        self.prebuilt = {p["key"]: p for p in prebuilt}
        self.reasons = dict(reasons or {})
        self.gpu_lock_fd = gpu_lock_fd
        self.gpu_turnstile_fd = gpu_turnstile_fd
        self.gpu_turnstile_patience_s = gpu_turnstile_patience_s
        self.records = []
        self._saved = None

    def __enter__(self):
        from torch.utils import cpp_extension
        self._module = cpp_extension
        self._saved = (cpp_extension.load_inline, cpp_extension.load)
        real_inline, real_load = self._saved

        def load_inline(*args, **kwargs):
            return self._call("load_inline", real_inline, args, kwargs)

        def load(*args, **kwargs):
            return self._call("load", real_load, args, kwargs)

        for fn, real in ((load_inline, real_inline), (load, real_load)):
            fn.__wrapped__ = real
            fn.__doc__ = real.__doc__
        cpp_extension.load_inline, cpp_extension.load = load_inline, load
        return self

    def __exit__(self, *exc):
        self._module.load_inline, self._module.load = self._saved
        return False

    def _call(self, fn_name, real, args, kwargs):
        err = _unknown_option_error(fn_name, real, args, kwargs)
        if err is not None:
            raise err
        bound = inspect.signature(real).bind(*args, **kwargs)
        name = str(bound.arguments.get("name"))
        start = time.perf_counter()
        try:
            arguments = dict(bound.arguments)
            if fn_name == "load":  # the files as they are now, which the answer has just written
                arguments["sources"] = inline_calls.read_source_files(arguments.get("sources"))
            key = inline_calls.call_key(inline_calls.normalize(fn_name, arguments))
            hit = self.prebuilt.get(key)
            reason = None if hit else self._reason(name, "its arguments at run time differ from what kagent "
                                                         "read in the file")
        except inline_calls.TorchBuildFails as u:
            self.records.append({"name": name, "built_by": "nobody", "reason": str(u), "seconds": 0.0})
            # What torch's build would raise, without its minute: the answer's own except sees it.
            raise ExtensionBuildError(_build_error_text(name, u)) from None
        except inline_calls.Unsupported as u:
            hit, reason = None, self._reason(name, str(u))
        # kagent's build of this very call failed in the answer's own code: torch's fails the same
        # way, after 15-20 s of this worker's time (CUDA-L1's l2_p75). Its error, at once.
        failed = _build_error_text(name, hit["build_error"]) if hit and hit.get("build_error") else None
        if failed:
            hit, reason = None, self._reason(name, failed)
        record = {"name": name, "built_by": "nobody" if failed else "kagent" if hit else "torch",
                  "reason": "" if hit else reason}
        try:
            if failed:
                raise ExtensionBuildError(failed) from None
            if hit:
                return self._bind(hit, name)
            try:
                with _gpu_lock_let_go(self.gpu_lock_fd, self.gpu_turnstile_fd, self.gpu_turnstile_patience_s):
                    return real(*args, **kwargs)
            except Exception as exc:
                if "Error building extension" in str(exc):
                    raise ExtensionBuildError(f"{exc}\n(built by torch's {fn_name}: kagent did not, "
                                              f"because {reason})") from None
                raise
        finally:
            record["seconds"] = round(time.perf_counter() - start, 4)
            self.records.append(record)

    def _reason(self, name, otherwise):
        if name in self.reasons:
            return self.reasons[name]
        if "*" in self.reasons:  # the orchestrator could not read the file
            return self.reasons["*"]
        if not self.prebuilt and not self.reasons:
            return "kagent built nothing for this answer (it was not read before it ran)"
        return otherwise

    @staticmethod
    def _bind(hit, name):
        import torch
        if hit.get("binding"):
            _register_through_binding(hit)
        else:
            torch.ops.load_library(hit["library"])
        ops = getattr(torch.ops, hit["op_namespace"])
        module = types.ModuleType(str(name), f"{name}: built by kagent, functions called through the dispatcher")
        for fn in hit["functions"]:
            setattr(module, fn, getattr(ops, fn).default)
        return module
