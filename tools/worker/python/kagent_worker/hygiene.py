"""Worker hygiene, Python's half: the process-wide state one evaluation could leave behind for
the next, captured before a request and checked and put back after it. The C++ half
(tools/worker/service/worker_state.h) adds what only it sees: CUDA errors, graph captures in
progress, native threads, GPU memory, the allocator's settings.

capture() -> a snapshot; restore(snapshot) -> findings [{item, detail, action, charged}]
(restore(snapshot, during_evaluation=True) in the middle of an evaluation, where a reference
failed beside the candidate: the evaluation's own grad mode, no_grad, is kagent's and stays):
  action "restored": put back, the worker serves on;
  action "replaced": cannot be put back from here, the worker must be replaced;
  charged: the state made the worker unusable, the candidate's verdict names it.
The random generators are put back every time, silently: kagent's own seeding moves them too.
A CUDA generator left in graph-capture mode (a capture that began and never ended: every later
random draw raises "Offset increment outside graph capture encountered unexpectedly") is
reported, and its state replaced by a clean copy (graphsafe_set_state: the flag lives in the
generator's shared state, which a clone does not carry).
"""

import os
import random
import sys
import threading
import warnings

import torch

_MISSING = object()

# Namespaces and classes whose functions a candidate could replace (what the reference, the
# timer and kagent's own steps call). Modules: their own attributes; classes: their own
# __dict__ (a subclass's inherited methods live on the base, which is listed).
_MODULES = ("torch", "torch.nn.functional", "torch._C._nn", "torch.linalg", "torch.special", "torch.fft",
            "torch.cuda", "time")
_TORCH_DIR = os.path.dirname(torch.__file__)
_DYNAMO_DIR = os.path.join(_TORCH_DIR, "_dynamo")
# tqdm: torch.compile's progress bars start tqdm's monitor thread, which sleeps and outlives
# them (found on an H100: every evaluation with the torch.compile baseline was charged with it).
_LIBRARY_MODULES = ("torch", "triton", "concurrent", "threading", "multiprocessing", "queue", "asyncio",
                    "tqdm", "kagent_worker")


# What Python itself stores on a class the first time anyone reads it (typing, inspect and
# torch.compile read a model class's annotations): no candidate's patch (guards.py says more).
_LAZY_CLASS_ATTRIBUTES = frozenset({"__annotations__", "__annotate__", "__annotations_cache__", "__annotate_func__"})


def _settings():
    """(name, get, set) of every process-wide switch kagent's steps depend on."""
    b = torch.backends
    out = [
        ("torch.get_default_dtype()", torch.get_default_dtype, torch.set_default_dtype),
        ("torch.is_grad_enabled()", torch.is_grad_enabled, torch.set_grad_enabled),
        ("torch.is_anomaly_enabled()", torch.is_anomaly_enabled, torch.set_anomaly_enabled),
        ("torch.are_deterministic_algorithms_enabled()",
         lambda: (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()),
         lambda v: torch.use_deterministic_algorithms(v[0], warn_only=v[1])),
        ("torch.get_float32_matmul_precision()", torch.get_float32_matmul_precision,
         torch.set_float32_matmul_precision),
        ("torch.get_num_threads()", torch.get_num_threads, torch.set_num_threads),
        ("torch.is_autocast_enabled('cuda')", lambda: torch.is_autocast_enabled("cuda"),
         lambda v: torch.set_autocast_enabled("cuda", v)),
        ("torch.is_autocast_enabled('cpu')", lambda: torch.is_autocast_enabled("cpu"),
         lambda v: torch.set_autocast_enabled("cpu", v)),
        ("torch.get_autocast_dtype('cuda')", lambda: torch.get_autocast_dtype("cuda"),
         lambda v: torch.set_autocast_dtype("cuda", v)),
    ]
    for owner, prefix, names in (
            (b.cuda.matmul, "torch.backends.cuda.matmul.",
             ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")),
            (b.cudnn, "torch.backends.cudnn.", ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit")),
            (b.mkldnn, "torch.backends.mkldnn.", ("enabled",)),
            (b.opt_einsum, "torch.backends.opt_einsum.", ("enabled",))):
        for name in names:
            out.append((prefix + name, lambda o=owner, n=name: getattr(o, n),
                        lambda v, o=owner, n=name: setattr(o, n, v)))
    for kind in ("flash", "mem_efficient", "math", "cudnn"):
        get = getattr(b.cuda, f"{kind}_sdp_enabled", None)
        put = getattr(b.cuda, f"enable_{kind}_sdp", None)
        if get and put:
            out.append((f"torch.backends.cuda.{kind}_sdp_enabled()", get, put))
    out.append(("torch.backends.cuda.preferred_linalg_library()", b.cuda.preferred_linalg_library,
                b.cuda.preferred_linalg_library))
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        out += [
            ("torch.cuda.current_device()", torch.cuda.current_device, torch.cuda.set_device),
            ("torch.cuda.get_sync_debug_mode()", torch.cuda.get_sync_debug_mode, torch.cuda.set_sync_debug_mode),
            ("torch.cuda.get_per_process_memory_fraction()", torch.cuda.get_per_process_memory_fraction,
             torch.cuda.set_per_process_memory_fraction),
        ]
    return out


def _read(get):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TF32 getters warn about their newer API
        return get()


def _owners():
    """(name, object) of every namespace and class whose functions are kept."""
    owners = []
    for dotted in _MODULES:
        module = sys.modules.get(dotted)
        if module is not None:
            owners.append((dotted, module))
    owners.append(("torch._C._VariableFunctions", type(torch._C._VariableFunctions)))
    for cls in (torch.Tensor, torch._C.TensorBase, torch.cuda.Event, torch.cuda.Stream, torch.autograd.Function):
        owners.append((f"{cls.__module__}.{cls.__qualname__}", cls))
    for name, cls in list(vars(torch.nn).items()):
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module):
            owners.append((f"torch.nn.{name}", cls))
    for name, module in list(sys.modules.items()):
        if name.startswith("kagent_worker") and module is not None:
            owners.append((name, module))
        # The loaded problems (and earlier answers), kept across evaluations: an answer runs in
        # its problem's names (problem.py), so `Model.forward = ...` would change the reference
        # of every later evaluation of that problem in this worker.
        if name.startswith("kagent_loaded_") and module is not None:
            owners.append((name, module))
            for cls_name, cls in list(vars(module).items()):
                if isinstance(cls, type) and cls.__module__ == name:
                    owners.append((f"{name}.{cls_name}", cls))
    return owners


def _functions(owner):
    return {k: v for k, v in list(vars(owner).items()) if callable(v) or isinstance(v, (staticmethod, classmethod))}


def _torch_wrapper_of(obj, original):
    """torch patches some of its own functions on first use (torch._dynamo's import wraps
    manual_seed, its mutation guard replaces nn.Module.__init__ and __setstate__): code of
    torch's own that wraps the original, or comes from torch._dynamo, is no candidate's."""
    fn = getattr(obj, "__func__", obj)
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_filename.startswith(_TORCH_DIR):
        return False
    if code.co_filename.startswith(_DYNAMO_DIR):
        return True
    inner, original = fn, getattr(original, "__func__", original)
    for _ in range(8):
        inner = getattr(inner, "__wrapped__", None)
        if inner is None:
            return False
        if inner is original:
            return True
    return False


def _library_thread(t):
    target = getattr(t, "_target", None)
    module = getattr(target, "__module__", None) or type(t).__module__ or ""
    return module.split(".")[0] in _LIBRARY_MODULES


def _cuda_generators():
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return []
    return list(torch.cuda.default_generators)


def _device_context():
    return getattr(torch._GLOBAL_DEVICE_CONTEXT, "device_context", None)


def _cwd():
    try:
        return os.getcwd()
    except OSError:  # the folder was removed under the process
        return None


def capture():
    """The state now: before a request, while nothing of a candidate has run."""
    cuda_gens = _cuda_generators()
    streams = []
    if cuda_gens:
        streams = [torch.cuda.current_stream(d) for d in range(torch.cuda.device_count())]
    return {
        "settings": {name: (get, put, _read(get)) for name, get, put in _settings()},
        "functions": [(name, owner, _functions(owner)) for name, owner in _owners()],
        "cpu_rng": torch.get_rng_state(),
        "cuda_rng": [g.clone_state() for g in cuda_gens],
        "python_random": random.getstate(),
        "threads": {t.ident for t in threading.enumerate()},
        "function_modes": torch._C._len_torch_function_stack(),
        "dispatch_modes": torch._C._len_torch_dispatch_stack(),
        "device_context": _device_context(),
        "streams": streams,
        "cwd": _cwd(),
    }


def _finding(item, detail, action="restored", charged=False):
    return {"item": item, "detail": detail, "action": action, "charged": charged}


def _restore_modes(snap, out):
    # The default device first: torch.set_default_device keeps its mode on the stack.
    if _device_context() is not snap["device_context"]:
        now = torch.get_default_device()
        ctx = snap["device_context"]
        torch.set_default_device(ctx.device if ctx is not None else None)
        out.append(_finding("torch.get_default_device()", f"{now} -> {torch.get_default_device()}"))
    for item, length, pop in (
            ("torch_function_mode", torch._C._len_torch_function_stack, torch._C._pop_torch_function_stack),
            ("torch_dispatch_mode", torch._C._len_torch_dispatch_stack, torch._C._pop_torch_dispatch_stack)):
        key = "function_modes" if item == "torch_function_mode" else "dispatch_modes"
        popped = []
        while length() > snap[key]:
            popped.append(type(pop()).__name__)
        if popped:
            out.append(_finding(item, f"{len(popped)} left active: {', '.join(popped)}"))
        if length() < snap[key]:
            out.append(_finding(item, f"{snap[key] - length()} of kagent's own removed", "replaced", True))


# What an evaluation itself sets for its whole length (evaluation.cpp runs under no_grad).
_EVALUATION_SETTINGS = frozenset({"torch.is_grad_enabled()"})


def _restore_settings(snap, out, during_evaluation=False):
    # Every setting is read before any is put back: some are one switch seen two ways
    # (torch.backends.cuda.matmul.allow_tf32 and torch.get_float32_matmul_precision()), and
    # putting one back would hide the other from the finding.
    changed = []
    for name, (get, put, before) in snap["settings"].items():
        if during_evaluation and name in _EVALUATION_SETTINGS:
            continue
        try:
            now = _read(get)
        except Exception as exc:  # a getter that fails now did not before: the state is broken
            out.append(_finding(name, f"unreadable: {exc}", "replaced", True))
            continue
        if now != before:
            changed.append((name, put, before, now))
    for name, put, before, now in changed:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                put(before)
            out.append(_finding(name, f"{now!r} -> {before!r}"))
        except Exception as exc:
            out.append(_finding(name, f"{now!r}, cannot be put back: {exc}", "replaced", True))


def _restore_functions(snap, out):
    replaced = []

    def put_back(name, owner, key, obj):
        try:
            if obj is _MISSING:
                delattr(owner, key)
            else:
                setattr(owner, key, obj)
            replaced.append(f"{name}.{key}")
        except (AttributeError, TypeError) as exc:
            out.append(_finding("patched_function", f"{name}.{key} cannot be put back: {exc}", "replaced", True))

    for name, owner, before in snap["functions"]:
        now = vars(owner)
        for key, obj in before.items():
            current = now.get(key, _MISSING)
            if current is not obj and not (current is not _MISSING and _torch_wrapper_of(current, obj)):
                put_back(name, owner, key, obj)
        if isinstance(owner, type):
            # A method added to a class shadows the one it inherits (torch.Tensor.add lives on
            # TensorBase): the candidate's, unless torch's own wrapper of the inherited one.
            for key in set(now) - set(before) - _LAZY_CLASS_ATTRIBUTES:
                current = now[key]
                if callable(current) and not _torch_wrapper_of(current, getattr(owner.__mro__[1], key, None)):
                    put_back(name, owner, key, _MISSING)
    if replaced:
        shown = ", ".join(replaced[:5]) + (f" and {len(replaced) - 5} more" if len(replaced) > 5 else "")
        out.append(_finding("patched_function", f"replaced functions put back: {shown}"))


def _restore_generators(snap, out):
    torch.set_rng_state(snap["cpu_rng"])
    random.setstate(snap["python_random"])
    for i, (gen, saved) in enumerate(zip(_cuda_generators(), snap["cuda_rng"])):
        stuck = None
        if not torch.cuda.is_current_stream_capturing():
            try:
                with torch.cuda.device(i):
                    torch.empty(4, device=f"cuda:{i}").uniform_()
            except RuntimeError as exc:
                stuck = str(exc).split("\n")[0]
        # A clean copy of the state captured before: seed and offset as they were, no capture
        # flag, no graphs registered.
        gen.graphsafe_set_state(saved.clone_state())
        if stuck:
            out.append(_finding("cuda_generator", f"left in graph-capture mode ({stuck}); a clean state put in"))


def _restore_streams(snap, out):
    for device, stream in enumerate(snap["streams"]):
        now = torch.cuda.current_stream(device)
        if now != stream:
            torch.cuda.set_stream(stream)
            out.append(_finding("torch.cuda.current_stream()", f"device {device}: a stream of the candidate's was "
                                                              "left current; the default put back"))


def _restore_cwd(snap, out):
    # The worker's working directory is its scratch folder (worker_main.cpp): an answer that
    # builds in a relative folder after one that changed directory must find it there.
    before, now = snap["cwd"], _cwd()
    if before is None or now == before:
        return
    try:
        os.chdir(before)
        out.append(_finding("os.getcwd()", f"{now!r} -> {before!r}"))
    except OSError as exc:
        out.append(_finding("os.getcwd()", f"{now!r}, cannot go back to {before!r}: {exc}", "replaced", True))


def _check_threads(snap, out):
    left = [t for t in threading.enumerate() if t.ident not in snap["threads"] and t.is_alive()]
    theirs = [t.name for t in left if not _library_thread(t)]
    if theirs:
        out.append(_finding("python_thread", f"{len(theirs)} still running: {', '.join(sorted(theirs)[:5])}",
                            "replaced", True))


def restore(snap, during_evaluation=False):
    """Findings for whatever differs from `snap` now, after putting back what can be."""
    out = []
    _restore_modes(snap, out)
    _restore_settings(snap, out, during_evaluation)
    _restore_functions(snap, out)
    _restore_streams(snap, out)
    _restore_generators(snap, out)
    _restore_cwd(snap, out)
    _check_threads(snap, out)
    return out
