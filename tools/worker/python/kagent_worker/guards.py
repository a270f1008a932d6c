"""Reward-hack guards: the checks only Python can make (tampering with timing or torch
functions, threads). The C++ guards call these and turn findings into verdicts. The fp64
truth is precision.py's, the extra shapes shapes.py's."""

import inspect
import sys
import threading

import torch

from kagent_worker import problem as _problem


def finding(name, action, message):
    return {"name": name, "action": action, "message": message}


# -- tampering: what a candidate could replace to fool a timer or the reference --

_TIME_FUNCTIONS = ("perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns",
                   "process_time", "process_time_ns", "thread_time", "thread_time_ns", "sleep")
_CUDA_TIMING = ("synchronize", "current_stream", "default_stream", "stream", "set_stream", "Event", "Stream",
                "ExternalStream", "StreamContext")
_TORCH_NAMESPACES = ("torch", "torch.nn.functional", "torch._C._nn", "torch._C._VariableFunctions", "torch.linalg",
                     "torch.special", "torch.fft")


# Attributes Python itself creates the first time anyone reads them: a class without
# annotations of its own gets an empty __annotations__ dict stored on it when it is read
# (torch.jit.script, typing, dataclasses and inspect all read it), which would otherwise look
# like a base class's dict replaced. None of them computes anything.
_LAZY_CLASS_ATTRIBUTES = frozenset({"__annotations__", "__annotate__", "__annotations_cache__",
                                    "__annotate_func__"})


def _class_items(prefix, cls):
    """Every attribute a class has, through its MRO, as stored (no binding: a classmethod
    fetched with getattr is a new object each time, the stored one is not)."""
    items = {}
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        for name, obj in vars(klass).items():
            if name not in _LAZY_CLASS_ATTRIBUTES:
                items[f"{prefix}.{name}"] = obj
    return items


def _namespace(dotted):
    obj = sys.modules.get(dotted)
    if obj is None:
        obj = torch
        for part in dotted.split(".")[1:]:
            obj = getattr(obj, part)
    return obj


def _precision_settings():
    b = torch.backends
    return {
        "torch.backends.cuda.matmul.allow_tf32": b.cuda.matmul.allow_tf32,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            b.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            b.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "torch.backends.cudnn.allow_tf32": b.cudnn.allow_tf32,
        "torch.backends.cudnn.enabled": b.cudnn.enabled,
        "torch.backends.cudnn.deterministic": b.cudnn.deterministic,
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision(),
        "torch.get_default_dtype()": torch.get_default_dtype(),
    }


def guard_snapshot():
    """What is in place before a candidate loads: timing functions, torch's functions, Tensor
    and nn.Module methods, every nn module's methods, the loaded problems' classes (the
    reference), this helper module, and torch's precision settings. Objects are kept (not
    ids), so an identity cannot be recycled in between."""
    timing, patched = {}, {}
    time_module = sys.modules["time"]
    timing["sys.modules['time']"] = time_module
    for name in _TIME_FUNCTIONS:
        timing[f"time.{name}"] = getattr(time_module, name, None)
    timing["torch.cuda"] = torch.cuda
    for name in _CUDA_TIMING:
        timing[f"torch.cuda.{name}"] = getattr(torch.cuda, name, None)
    timing.update(_class_items("torch.cuda.Event", torch.cuda.Event))
    timing.update(_class_items("torch.cuda.Stream", torch.cuda.Stream))
    for dotted in _TORCH_NAMESPACES:
        namespace = _namespace(dotted)
        if not hasattr(namespace, "__dict__"):  # torch._C._VariableFunctions: its functions live on its class
            patched.update(_class_items(dotted, type(namespace)))
            continue
        for name, obj in list(vars(namespace).items()):
            if callable(obj) and not inspect.ismodule(obj):
                patched[f"{dotted}.{name}"] = obj
    patched["torch.nn.functional"] = torch.nn.functional
    patched.update(_class_items("torch.Tensor", torch.Tensor))
    for name, cls in list(vars(torch.nn).items()):
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module):
            patched.update(_class_items(f"torch.nn.{name}", cls))
    for mod_name, module in list(sys.modules.items()):
        # Functions and classes only (Model, get_inputs, ...): module-level data may change
        # legitimately (a problem's own counter, this helper's caches).
        if mod_name.startswith(("kagent_loaded_", "kagent_worker")):
            for name, obj in list(vars(module).items()):
                if not callable(obj):
                    continue
                patched[f"{mod_name}.{name}"] = obj
                if isinstance(obj, type) and obj.__module__ == mod_name:
                    patched.update(_class_items(f"{mod_name}.{name}", obj))
    # torch.compile's first use wraps these itself (torch._dynamo's import wraps manual_seed,
    # its disable-decorators wrap nn.Module's __init__ and __setstate__, which every module
    # class inherits); none of them computes a result.
    module_init = torch.nn.Module.__init__
    for key in [k for k, obj in patched.items() if k == "torch.manual_seed" or k.endswith(".__setstate__") or
                (k.endswith(".__init__") and obj is module_init)]:
        del patched[key]
    return {"timing": timing, "patched": patched, "settings": _precision_settings(),
            "autotuning": torch.backends.cudnn.benchmark, "autotuning_seen": [], "autotuning_reported": False}


# -- cuDNN's autotuning: no precision setting, but a process-wide switch --

def put_back_autotuning(snapshot):
    """torch.backends.cudnn.benchmark as the snapshot found it, where the candidate switched it:
    autotuning changes no precision (KernelBench's harness judges such answers correct), but it
    is process-wide: left on, the reference's trials, the guards and the eager baseline would
    run on whatever algorithms cuDNN's autotuning picks, and a baseline measured so would be
    cached for every later candidate. What was seen is kept for guard_tampering to report once."""
    before, now = snapshot["autotuning"], torch.backends.cudnn.benchmark
    if now != before:
        torch.backends.cudnn.benchmark = before
        snapshot["autotuning_seen"].append(f"{now!r}")


def _autotuning_finding(snapshot):
    put_back_autotuning(snapshot)
    if not snapshot["autotuning_seen"] or snapshot["autotuning_reported"]:
        return []
    snapshot["autotuning_reported"] = True
    return [finding("cudnn_benchmark", "reject",
                    f"torch.backends.cudnn.benchmark set to {snapshot['autotuning_seen'][0]} by the candidate (it "
                    f"changes no precision); put back to {snapshot['autotuning']!r} after the candidate loaded and at "
                    "each guard check, so the baselines and whatever ran after it was put back used cuDNN's default "
                    "algorithm choice")]


def guard_tampering(snapshot):
    """Findings for whatever differs from `snapshot` now: replaced or deleted attributes,
    changed precision settings; cudnn.benchmark put back and reported once (cudnn_benchmark)."""
    now = guard_snapshot()
    missing = object()
    findings = []
    for kind, name in (("timing", "timing_tampered"), ("patched", "torch_patched")):
        changed = [key for key, obj in snapshot[kind].items() if now[kind].get(key, missing) is not obj]
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            what = "timing functions" if kind == "timing" else "PyTorch or reference functions"
            findings.append(finding(name, "reject", f"{what} replaced after the candidate loaded: {shown}"))
    settings = [f"{k}: {v!r} -> {now['settings'].get(k)!r}" for k, v in snapshot["settings"].items()
                if now["settings"].get(k) != v]
    if settings:
        findings.append(finding("torch_patched", "reject",
                                 "precision settings changed by the candidate (process-wide: they apply to the "
                                 "reference's computation too, where it uses those ops): "
                                 + "; ".join(settings)))
    kept = _problem.take_modified()
    if kept:
        findings.append(finding("inputs_modified", "reject",
                                "values kagent keeps between evaluations were changed after the candidate loaded ("
                                + "; ".join(kept[:3]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
                                + "): drawn again from their seeds for the trials, as they were before"))
    return findings + _autotuning_finding(snapshot)


# -- threads --

def python_threads():
    return frozenset(t.ident for t in threading.enumerate())


def new_python_threads(before):
    """Names of live Python threads that were not there at `before`."""
    return sorted(t.name for t in threading.enumerate() if t.ident not in before and t.is_alive())


# -- the kernelbench source: try/except fallbacks, PyTorch compute in forward, threads --
