"""Python half of the kagent worker, run by the interpreter the worker embeds.

It does what only Python can do well: execute a KernelBench problem file, build its
Model and inputs, derive the ProblemSpec, load `kernelbench`-format candidates and
build the torch.compile baseline. Timing, checking and the native candidates stay in
C++. Errors carry a `kind` so the C++ side can classify them without parsing text.
"""

import ast
import copy
import hashlib
import importlib.util
import inspect
import os
import re
import sys
import threading
import traceback

import torch


class KagentError(Exception):
    """An error with a stable kind: problem_load_error, problem_incomplete, file_not_found,
    candidate_load_error, compile_error, invalid."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


_module_counter = [0]


def _short_exception(exc, path):
    """One line: 'SyntaxError: invalid syntax (x.py, line 3)' or the last frame in the file."""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} ({os.path.basename(path)}, line {exc.lineno})"
    where = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == path:
            where = f" ({os.path.basename(path)}, line {frame.lineno})"
            break
    return f"{type(exc).__name__}: {exc}{where}"


def _exec_file(path, kind):
    if not os.path.isfile(path):
        raise KagentError("file_not_found", f"no such file: {path}")
    _module_counter[0] += 1
    name = f"kagent_loaded_{_module_counter[0]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the file's own error, whatever it is
        del sys.modules[name]
        raise KagentError(kind, _short_exception(exc, path)) from None
    return module


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _arg_entry(name, value):
    entry = {"name": name, "cpp_name": re.sub(r"\W", "_", name), "dtype": "", "shape": []}
    if isinstance(value, torch.Tensor):
        entry.update(kind="tensor", dtype=_dtype_name(value.dtype), shape=list(value.shape))
    elif isinstance(value, bool):
        entry["kind"] = "bool"
    elif isinstance(value, int):
        entry["kind"] = "int"
    elif isinstance(value, float):
        entry["kind"] = "float"
    else:
        entry.update(kind="unsupported", python_type=type(value).__name__)
    return entry


def _forward_arg_names(model_cls, count):
    """Names of forward's parameters (minus self); *args get x0, x1, ..."""
    try:
        params = list(inspect.signature(model_cls.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            break
        names.append(p.name)
    while len(names) < count:
        names.append(f"x{len(names)}")
    return names[:count]


def _flatten_outputs(out):
    if isinstance(out, torch.Tensor):
        return [out], False
    if isinstance(out, (tuple, list)):
        return list(out), True
    raise KagentError("problem_incomplete", f"forward returns {type(out).__name__}, not a tensor or a tuple of tensors")


class Problem:
    """A loaded problem file: builds models and inputs on a device, reproducibly by seed."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.module = _exec_file(self.path, "problem_load_error")
        missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(self.module, n)]
        if missing:
            raise KagentError("problem_incomplete", f"problem defines no {', '.join(missing)} ({os.path.basename(path)})")
        with open(self.path, "rb") as f:
            data = f.read()
        self.source = data.decode("utf-8", errors="replace")
        self.sha256 = hashlib.sha256(data).hexdigest()
        self.name = os.path.splitext(os.path.basename(self.path))[0]

    def _call(self, fn_name):
        try:
            return getattr(self.module, fn_name)()
        except Exception as exc:
            raise KagentError("problem_load_error", f"{fn_name}() failed: {_short_exception(exc, self.path)}") from None

    def init_inputs(self):
        return list(self._call("get_init_inputs"))

    def make_model(self, device, seed=42, cls=None):
        torch.manual_seed(seed)
        with torch.device(device):
            try:
                model = (cls or self.module.Model)(*self.init_inputs())
            except KagentError:
                raise
            except Exception as exc:
                raise KagentError("problem_load_error", f"Model(...) failed: {_short_exception(exc, self.path)}") from None
        return model.to(device)

    def make_inputs(self, device, seed):
        torch.manual_seed(seed)
        with torch.device(device):
            inputs = list(self._call("get_inputs"))
        return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]

    def extra_inputs(self, device, seed):
        """get_extra_inputs(): optional further input lists (other shapes) a candidate must also
        get right; [] when the problem defines none."""
        if not hasattr(self.module, "get_extra_inputs"):
            return []
        torch.manual_seed(seed)
        with torch.device(device):
            sets = [list(s) for s in self._call("get_extra_inputs")]
        return [[x.to(device) if isinstance(x, torch.Tensor) else x for x in s] for s in sets]

    def spec(self, device="meta", model=None):
        """The ProblemSpec as a dict; shapes come from running `model` (default: a new one) on
        `device` (meta costs nothing)."""
        model = self.make_model(device) if model is None else model
        inputs = self.make_inputs(device, seed=0)
        names = _forward_arg_names(self.module.Model, len(inputs))
        with torch.no_grad():
            try:
                out = model(*inputs)
            except Exception as exc:
                if device == "meta":
                    raise
                raise KagentError("problem_load_error", f"Model.forward failed: {_short_exception(exc, self.path)}") from None
        outputs, is_tuple = _flatten_outputs(out)
        for o in outputs:
            if not isinstance(o, torch.Tensor):
                raise KagentError("problem_incomplete", f"forward returns a {type(o).__name__} among its outputs")
        param_names = set(dict(model.named_parameters()).keys())
        params = []
        for key, value in model.state_dict(keep_vars=True).items():
            entry = _arg_entry(key, value)
            entry["is_buffer"] = key not in param_names
            params.append(entry)
        level = re.search(r"level(\d+)", self.path)
        return {
            "name": self.name,
            "path": self.path,
            "sha256": self.sha256,
            "level": int(level.group(1)) if level else None,
            "inputs": [_arg_entry(n, v) for n, v in zip(names, inputs)],
            "params": params,
            "outputs": [{"dtype": _dtype_name(o.dtype), "shape": list(o.shape)} for o in outputs],
            "output_is_tuple": is_tuple,
            "training": model.training,
            "mode_modules": _mode_modules(model),
            "source": self.source,
            "torch_version": torch.__version__,
        }


def _mode_modules(model):
    """The modules whose output depends on training vs eval mode, as [{type, count}]: BatchNorm
    (batch statistics in training, running ones in eval), dropout (and RNN dropout between
    layers) with its probability. The model is evaluated in the mode the problem leaves it in."""
    counts = {}
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            kind = type(m).__name__
        elif isinstance(m, torch.nn.modules.dropout._DropoutNd):
            kind = f"{type(m).__name__}(p={m.p:g})"
        elif isinstance(m, torch.nn.RNNBase) and m.dropout > 0:
            kind = f"{type(m).__name__}(dropout={m.dropout:g})"
        else:
            continue
        counts[kind] = counts.get(kind, 0) + 1
    return [{"type": k, "count": n} for k, n in counts.items()]


def derive_spec(problem):
    """Meta tensors where they work (no memory, no GPU), the real device where they do not: a
    model whose __init__ needs values (.item() on meta fails) is built there and moved to meta;
    recurrent modules run on the real device (on meta, an LSTM's forward is a Python loop over
    time steps that takes 20-50 s for KernelBench's 512 steps); an op without a meta kernel
    sends the forward there too."""
    real = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        model = problem.make_model("meta")
    except KagentError:
        model = problem.make_model(real).to("meta")  # a real failure raises again here
    if any(isinstance(m, torch.nn.RNNBase) for m in model.modules()):
        return problem.spec(real)
    try:
        return problem.spec("meta", model)
    except KagentError:
        raise
    except Exception:
        return problem.spec(real)


def open_problem(path):
    """The problem without its spec: what an evaluation needs (the spec's meta forward
    costs a second or two the first time, for importing torch's meta registrations)."""
    return Problem(path)


def warm_up(problem, seed=42):
    """One reference run on the GPU, so that library handles and lazily loaded kernels are
    ready before the candidate arrives; kagent asks for it while nvcc compiles."""
    with torch.no_grad():
        problem.make_model("cuda", seed)(*problem.make_inputs("cuda", seed))
    torch.cuda.synchronize()


def load_kernelbench_candidate(path, problem, device, seed=42):
    """Executes a KernelBench-format answer (ModelNew, usually with load_inline) and builds
    ModelNew with the same seed as the reference, so modules get the same weights."""
    try:
        module = _exec_file(os.path.abspath(path), "candidate_load_error")
    except KagentError as err:
        text = err.message
        # load_inline raises "Error building extension ...": that is a compile error.
        if "Error building extension" in text or "error:" in text and "ninja" in text.lower():
            raise KagentError("compile_error", text) from None
        raise
    if not hasattr(module, "ModelNew"):
        raise KagentError("invalid", "the candidate defines no class ModelNew")
    try:
        return problem.make_model(device, seed=seed, cls=module.ModelNew)
    except KagentError as err:
        raise KagentError("candidate_load_error", err.message.replace("Model(...)", "ModelNew(...)")) from None


def compiled_model(model):
    return torch.compile(model)


def _measure_dram_gbps(total_memory):
    """The achievable DRAM bandwidth the profile compares kernels against: a device-to-device
    copy of buffers far larger than L2, read + write bytes over the best of a few copies (a few
    ms once per worker). None when it cannot be measured."""
    nbytes = min(256 << 20, total_memory // 16) // 4 * 4
    try:
        src = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda")
        dst = torch.empty_like(src)
        dst.copy_(src)  # first launch and allocation stay out of the measurement
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        best_ms = float("inf")
        for _ in range(5):
            start.record()
            dst.copy_(src)
            end.record()
            end.synchronize()
            best_ms = min(best_ms, start.elapsed_time(end))
        del src, dst
        torch.cuda.empty_cache()  # give the buffers back: candidates get the whole GPU
    except RuntimeError:
        return None
    return round(2 * nbytes / (best_ms * 1e6), 1) if best_ms > 0 else None


def device_info():
    if not torch.cuda.is_available():
        return {"available": False}
    p = torch.cuda.get_device_properties(0)
    info = {
        "available": True,
        "name": p.name,
        "compute_capability": [p.major, p.minor],
        "sms": p.multi_processor_count,
        "memory_bytes": p.total_memory,
        "l2_bytes": getattr(p, "L2_cache_size", 0),
        "shared_memory_per_block_optin": getattr(p, "shared_memory_per_block_optin", 0),
        "shared_memory_per_sm": getattr(p, "shared_memory_per_multiprocessor", 0),
        "registers_per_sm": getattr(p, "regs_per_multiprocessor", 0),
        "max_threads_per_sm": getattr(p, "max_threads_per_multi_processor", 0),
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
    }
    gbps = _measure_dram_gbps(p.total_memory)
    if gbps:
        info["measured_dram_gbps"] = gbps
    return info


# ---- reward-hack guards: the checks only Python can make -------------------------------------
# The C++ side (tools/worker/guard_*.cpp) calls these and turns their findings into verdicts.


def extra_inputs(problem, device, seed):
    return problem.extra_inputs(device, seed)


def reference_fp64(model, inputs):
    """The reference run in float64 (a copy of the model and the floating inputs cast to
    double): the truth the precision guard measures eager and the candidate against. Returns
    the outputs, or a string saying why there is no fp64 truth (an op without a double kernel,
    a model that casts back to float itself)."""
    try:
        model64 = copy.deepcopy(model).double()
        args = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
        with torch.no_grad():
            outputs, _ = _flatten_outputs(model64(*args))
    except Exception as exc:  # whatever the model does in double, it is only a missing check
        return f"the reference does not run in float64: {type(exc).__name__}: {exc}"
    for i, o in enumerate(outputs):
        if isinstance(o, torch.Tensor) and o.is_floating_point() and o.dtype != torch.float64:
            return f"output {i} of the float64 reference is {_dtype_name(o.dtype)} (the model casts)"
    return outputs


def _finding(name, action, message):
    return {"name": name, "action": action, "message": message}


# -- tampering: what a candidate could replace to fool a timer or the reference --

_TIME_FUNCTIONS = ("perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns",
                   "process_time", "process_time_ns", "thread_time", "thread_time_ns", "sleep")
_CUDA_TIMING = ("synchronize", "current_stream", "default_stream", "stream", "set_stream", "Event", "Stream",
                "ExternalStream", "StreamContext")
_TORCH_NAMESPACES = ("torch", "torch.nn.functional", "torch._C._nn", "torch._C._VariableFunctions", "torch.linalg",
                     "torch.special", "torch.fft")


def _class_items(prefix, cls):
    """Every attribute a class has, through its MRO, as stored (no binding: a classmethod
    fetched with getattr is a new object each time, the stored one is not)."""
    items = {}
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        for name, obj in vars(klass).items():
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
        "torch.backends.cudnn.benchmark": b.cudnn.benchmark,
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
        if mod_name.startswith("kagent_loaded_") or mod_name == __name__:
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
    return {"timing": timing, "patched": patched, "settings": _precision_settings()}


def guard_tampering(snapshot):
    """Findings for whatever differs from `snapshot` now: replaced or deleted attributes,
    changed precision settings."""
    now = guard_snapshot()
    missing = object()
    findings = []
    for kind, name in (("timing", "timing_tampered"), ("patched", "torch_patched")):
        changed = [key for key, obj in snapshot[kind].items() if now[kind].get(key, missing) is not obj]
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            what = "timing functions" if kind == "timing" else "PyTorch or reference functions"
            findings.append(_finding(name, "reject", f"{what} replaced after the candidate loaded: {shown}"))
    settings = [f"{k}: {v!r} -> {now['settings'].get(k)!r}" for k, v in snapshot["settings"].items()
                if now["settings"].get(k) != v]
    if settings:
        findings.append(_finding("torch_patched", "reject",
                                 "precision settings changed by the candidate (they change the reference): "
                                 + "; ".join(settings)))
    return findings


# -- threads --

def python_threads():
    return frozenset(t.ident for t in threading.enumerate())


def new_python_threads(before):
    """Names of live Python threads that were not there at `before`."""
    return sorted(t.name for t in threading.enumerate() if t.ident not in before and t.is_alive())


# -- the kernelbench source: try/except fallbacks, PyTorch compute in forward, threads --

_THREAD_MODULES = ("threading", "_thread", "multiprocessing", "concurrent", "concurrent.futures",
                   "torch.multiprocessing")
# torch functions that make or describe tensors rather than compute a result
_TORCH_HELPERS = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "tensor",
    "as_tensor", "from_numpy", "is_tensor", "is_floating_point", "numel", "device", "dtype", "Size", "no_grad",
    "inference_mode", "enable_grad", "set_grad_enabled", "is_grad_enabled", "get_default_dtype", "manual_seed",
    "finfo", "iinfo", "result_type", "promote_types", "can_cast", "typename",
}
_TORCH_NON_COMPUTE = ("torch.cuda.", "torch.utils.", "torch.backends.", "torch.library.", "torch.autograd.",
                      "torch.jit.", "torch.compiler.", "torch.testing.")
# tensor methods that do real work (arithmetic operators and views are not flagged)
_COMPUTE_METHODS = {
    "matmul", "mm", "bmm", "addmm", "addmv", "baddbmm", "mv", "dot", "conv1d", "conv2d", "conv3d", "linear", "relu",
    "relu_", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax", "exp", "log", "sum", "mean", "var", "std",
    "norm", "max", "min", "amax", "amin", "logsumexp", "cumsum", "prod", "erf", "sqrt", "rsqrt", "clamp", "clamp_",
    "hardtanh", "leaky_relu", "elu", "softplus", "mish", "hardswish", "hardsigmoid", "layer_norm", "group_norm",
    "batch_norm", "max_pool2d", "avg_pool2d", "scaled_dot_product_attention",
}
# nn modules that hold or arrange other modules and compute nothing themselves
_NN_CONTAINERS = {"Identity", "Flatten", "Unflatten", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"}


class _SourceScan:
    """One pass over a kernelbench candidate's AST: import aliases, load_inline extensions,
    ModelNew's methods and its nn submodules; then what forward and except handlers reach."""

    def __init__(self, tree):
        self.tree = tree
        self.aliases = {}        # local name -> dotted path ("F" -> "torch.nn.functional")
        self.extensions = set()  # module-level names bound to load_inline()/load() results
        self.functions = {}      # module-level functions by name
        self.methods = {}        # ModelNew's methods by name
        self.self_modules = {}   # ModelNew attribute -> nn class name (compute modules only)
        self.self_extensions = set()
        self.model_new = None
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef) and node.name == "ModelNew":
                self.model_new = node
            elif isinstance(node, ast.Assign) and self._is_extension_build(node.value):
                self.extensions.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if self.model_new is not None:
            for item in self.model_new.body:
                if isinstance(item, ast.FunctionDef):
                    self.methods[item.name] = item
            for node in ast.walk(self.methods.get("__init__", ast.Module(body=[], type_ignores=[]))):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        attr = self._self_attr(target)
                        if attr:
                            self._note_attribute(attr, node.value)

    def dotted(self, node):
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    @staticmethod
    def _self_attr(node):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr
        return None

    def _is_extension_build(self, value):
        if not isinstance(value, ast.Call):
            return False
        d = self.dotted(value.func) or ""
        return d.endswith("cpp_extension.load_inline") or d.endswith("cpp_extension.load") or d in ("load_inline",)

    def _nn_class(self, d):
        if not d or not d.startswith("torch.nn.") or d.startswith("torch.nn.functional"):
            return None
        cls = getattr(torch.nn, d.rsplit(".", 1)[1], None)
        return cls if isinstance(cls, type) and issubclass(cls, torch.nn.Module) else None

    def _note_attribute(self, attr, value):
        if self._is_extension_build(value) or (isinstance(value, ast.Name) and value.id in self.extensions):
            self.self_extensions.add(attr)
        elif isinstance(value, ast.Call):
            cls = self._nn_class(self.dotted(value.func))
            if cls is not None and cls.__name__ not in _NN_CONTAINERS:
                self.self_modules[attr] = cls.__name__

    def _is_own(self, node):
        """An expression rooted at a load_inline extension (module name or self attribute)."""
        while isinstance(node, ast.Attribute):
            if self._self_attr(node) in self.self_extensions:
                return True
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.extensions

    def _torch_compute(self, d):
        if not d.startswith("torch."):
            return False
        if d.startswith("torch.ops."):
            return d.startswith("torch.ops.aten.")
        if d.startswith(_TORCH_NON_COMPUTE) or d.rsplit(".", 1)[1] in _TORCH_HELPERS:
            return False
        obj = torch
        try:
            for part in d.split(".")[1:]:
                obj = getattr(obj, part)
        except AttributeError:
            return True  # a torch function this torch lacks: still PyTorch doing the work
        return not isinstance(obj, type)  # constructing a class (a module, a dtype) computes nothing

    def compute_ops(self, nodes, seen=None):
        """'what (line N)' for every PyTorch computation reachable from `nodes`, following calls
        of ModelNew's methods and of module-level functions."""
        seen = set() if seen is None else seen
        ops = []
        for root in nodes:
            for node in ast.walk(root):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                    ops.append(f"the @ operator (line {node.lineno})")
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                if isinstance(func, ast.Call):  # nn.ReLU()(x): a module built and called on the spot
                    if self._nn_class(self.dotted(func.func)):
                        ops.append(f"{self.dotted(func.func)}(...)(...) (line {node.lineno})")
                    continue
                d = self.dotted(func) or ""
                attr = self._self_attr(func)
                if attr in self.self_modules:
                    ops.append(f"self.{attr} (nn.{self.self_modules[attr]}, line {node.lineno})")
                elif attr in self.methods and attr not in seen:
                    seen.add(attr)
                    ops += self.compute_ops(self.methods[attr].body, seen)
                elif isinstance(func, ast.Name) and func.id in self.functions and func.id not in seen:
                    seen.add(func.id)
                    ops += self.compute_ops(self.functions[func.id].body, seen)
                elif self._torch_compute(d):
                    ops.append(f"{d} (line {node.lineno})")
                elif isinstance(func, ast.Attribute) and func.attr in _COMPUTE_METHODS and not self._is_own(func):
                    ops.append(f".{func.attr}() (line {node.lineno})")
        return ops

    def thread_imports(self):
        found = []
        for node in ast.walk(self.tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Call) and (self.dotted(node.func) or "").endswith(("__import__", "import_module")):
                names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            hit = next((n for n in names if n in _THREAD_MODULES), None)
            if hit:
                found.append(f"{hit} (line {node.lineno})")
        return found


def scan_kernelbench_source(source):
    """Static findings on a kernelbench candidate: try_except_fallback (an except handler that
    computes with PyTorch: the custom kernel's failures hidden behind the reference's own ops),
    threads (threading / multiprocessing / concurrent.futures), torch_ops_in_forward (a flag:
    PyTorch ops compute in ModelNew.forward; whether that is cheating depends on how much of the
    GPU time they take, which the library_share guard measures)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []  # it executed, so it parses; nothing to judge otherwise
    scan = _SourceScan(tree)
    findings = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            for handler in node.handlers:
                ops = scan.compute_ops(handler.body)
                if ops:
                    findings.append(_finding(
                        "try_except_fallback", "reject",
                        f"the except handler at line {handler.lineno} computes with PyTorch ({', '.join(ops[:3])}): "
                        "failures of the custom code fall back to the reference's own ops"))
    threads = scan.thread_imports()
    if threads:
        findings.append(_finding("threads", "reject",
                                 f"uses {', '.join(threads[:3])}: work on other threads or processes escapes the "
                                 "timer and races the checks"))
    forward = scan.methods.get("forward")
    if forward is not None:
        ops = scan.compute_ops(forward.body)
        if ops:
            findings.append(_finding("torch_ops_in_forward", "flag",
                                     f"ModelNew.forward computes with PyTorch: {', '.join(ops[:4])}"
                                     + (f" and {len(ops) - 4} more" if len(ops) > 4 else "")))
    return findings
