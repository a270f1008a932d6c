"""Problems: execute a KernelBench file, build its Model and inputs reproducibly by seed,
derive the ProblemSpec, and load KernelBench-format candidates (ModelNew)."""

import copy
import hashlib
import inspect
import json
import os
import re
import sys
import weakref

import torch

from kagent_worker import draw_files
from kagent_worker.host_memory import page_locked_copy
from kagent_worker.inline_patch import TURNSTILE_PATIENCE_S, InlineExtensions
from kagent_worker.loading import KagentError, exec_file, short_exception

# Inputs up to this size are drawn on the CPU for the trials, as KernelBench draws them; larger
# ones on the GPU from the same seeds (the CPU's generator makes ~0.5 GB/s).
CPU_TRIAL_INPUT_BYTES = 256 << 20
# Host memory a problem may keep for its trials' CPU-drawn inputs: all 5 default trials of any
# problem drawn on the CPU, so that a later candidate's trials cost copies, not the CPU's random
# numbers (the worker keeps a few problems only: worker_service.cpp).
# Kept page-locked in memory that forks do not inherit (host_memory.py): copies to the GPU
# are direct, and a fork() of the worker copies none of it.
HOST_INPUTS_BYTES = 5 * CPU_TRIAL_INPUT_BYTES


class _HostDraws:
    """The trials' CPU draws of one problem source, by seed, shared by the Problem objects of
    that source in this process. KernelBench's leaderboard holds the same problem under many
    file names (149 answers, 99 sources), and the pool sends a repeat of a source to the worker
    that holds it (evaluation_pool.cpp): its draws, seconds of the CPU's generator for the
    largest inputs, are then taken, not made again. A draw is the source's and the seed's alone,
    as keeping it per seed already assumes."""

    def __init__(self):
        self.by_seed = {}  # seed -> the inputs as drawn (page-locked)
        self.fingerprints = {}  # seed -> _fingerprint(by_seed[seed]) when it was kept
        self.sizes = {}  # seed -> its bytes when it was kept
        self.bytes = 0
        self.users = 0  # live Problem objects of this source: each counts an equal share of bytes

    def keep(self, seed, inputs, size):
        self.by_seed[seed] = inputs
        self.fingerprints[seed] = _fingerprint(inputs)
        self.sizes[seed] = size
        self.bytes += size

    def drop(self, seed):
        self.by_seed.pop(seed, None)
        self.fingerprints.pop(seed, None)
        self.bytes -= self.sizes.pop(seed, 0)


_HOST_DRAWS = {}  # sha256 -> _HostDraws, while a Problem of that source is alive
_PROBLEMS = weakref.WeakSet()  # every live Problem: their kept reference copies (verify_kept)
# What the kept draws were found changed at their use since the last verify_kept(): a candidate
# of this evaluation changed them (guards.guard_tampering reports it; take_modified()).
_MODIFIED = []

# Kept values are checked by a fingerprint, not in full: up to this many elements of each tensor,
# spread over it, with its address, shape, strides and dtype. A candidate runs in this process
# and could change what kagent keeps between evaluations (the trials' CPU draws, the reference's
# CPU copy): zeroed or replaced wholesale, they would decide its own trials, or a later
# candidate's. A change aimed at unsampled elements is not seen; nothing in-process can be
# proof against code that studies kagent's own structures.
_FINGERPRINT_SAMPLES = 1024


def _fingerprint(value):
    """A cheap identity of a kept value (a tensor, or a list or tuple of values)."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, len(value), tuple(_fingerprint(v) for v in value))
    if not isinstance(value, torch.Tensor):
        return ("value", repr(value))
    t = value.detach()
    if t.layout != torch.strided or t.device.type != "cpu":
        return ("tensor", id(value), t.layout, t.device.type, tuple(t.shape), t.dtype)
    # The bytes of its storage, sampled: a view of any layout, never a copy of the whole.
    raw = torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage())
    n = raw.numel()
    if n > _FINGERPRINT_SAMPLES:
        raw = raw[:: n // _FINGERPRINT_SAMPLES][:_FINGERPRINT_SAMPLES]
    sample = hashlib.blake2b(raw.contiguous().numpy(), digest_size=16).digest() if n else b""
    return ("tensor", id(value), t.data_ptr(), tuple(t.shape), t.stride(), t.storage_offset(), t.dtype, sample)


def _model_fingerprint(model):
    """The reference's kept CPU copy: its modules' types and public instance attributes (a
    forward set on an instance), and every parameter and buffer."""
    modules = tuple((name, type(m), tuple(sorted(k for k in vars(m) if not k.startswith("_"))))
                    for name, m in model.named_modules())
    return (id(model), modules, tuple((k, _fingerprint(v)) for k, v in model.state_dict(keep_vars=True).items()))


def verify_kept():
    """Drops whatever kept value changed since it was kept (the trials' draws, the reference's CPU
    copies), so that it is made again when next needed; returns what was dropped. Called before
    every request's evaluation (Problem.prefetch), while nothing of its candidate has run: what
    it finds, an earlier candidate changed. Forgets what take_modified() would have returned."""
    dropped = []
    for sha256, draws in list(_HOST_DRAWS.items()):
        for seed in list(draws.by_seed):
            if _fingerprint(draws.by_seed[seed]) != draws.fingerprints.get(seed):
                draws.drop(seed)
                dropped.append(f"the trial inputs of seed {seed} (source {sha256[:12]})")
    for problem in list(_PROBLEMS):
        for seed in list(problem._templates):
            if _model_fingerprint(problem._templates[seed]) != problem._template_fingerprints.get(seed):
                problem._drop_template(seed)
                dropped.append(f"the reference's CPU copy of {problem.name} (seed {seed})")
    if dropped:
        print("kagent: kept values changed since they were kept, by an earlier candidate of this worker; made "
              "again: " + "; ".join(dropped), file=sys.stderr)
    _MODIFIED.clear()
    return dropped


def take_modified():
    """What was found changed at its use since the last verify_kept() (and taken back)."""
    found = list(_MODIFIED)
    _MODIFIED.clear()
    return found


def _host_draws_of(problem):
    draws = _HOST_DRAWS.setdefault(problem.sha256, _HostDraws())
    draws.users += 1
    weakref.finalize(problem, _let_go_of_host_draws, problem.sha256)  # not the problem: that would keep it
    return draws


def _let_go_of_host_draws(sha256):
    draws = _HOST_DRAWS.get(sha256)
    if draws is not None:
        draws.users -= 1
        if draws.users <= 0:
            del _HOST_DRAWS[sha256]


def kernelbench_seed(seed):
    """KernelBench's set_seed: the CPU generator and the current CUDA device's."""
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def trial_seeds(seed, count):
    """The correctness trials' seeds as KernelBench draws them (run_and_check_correctness): from
    the CPU generator seeded with `seed`, one randint in [0, 2**32 - 1) per trial."""
    torch.manual_seed(seed)
    return [int(torch.randint(0, 2**32 - 1, (1,)).item()) for _ in range(count)]


def tensor_bytes(values):
    """The bytes of the tensors among `values` (other values count nothing)."""
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _arg_entry(name, value):
    entry = {"name": name, "cpp_name": re.sub(r"\W", "_", name), "dtype": "", "shape": []}
    if isinstance(value, torch.Tensor):
        entry.update(kind="tensor", dtype=dtype_name(value.dtype), shape=list(value.shape))
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


def flatten_outputs(out):
    if isinstance(out, torch.Tensor):
        return [out], False
    if isinstance(out, (tuple, list)):
        return list(out), True
    raise KagentError("problem_incomplete", f"forward returns {type(out).__name__}, not a tensor or a tuple of tensors")


class Problem:
    """A loaded problem file: builds models and inputs on a device, reproducibly by seed."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.module = exec_file(self.path, "problem_load_error")
        missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(self.module, n)]
        if missing:
            raise KagentError("problem_incomplete", f"problem defines no {', '.join(missing)} ({os.path.basename(path)})")
        with open(self.path, "rb") as f:
            data = f.read()
        self.source = data.decode("utf-8", errors="replace")
        self.sha256 = hashlib.sha256(data).hexdigest()
        self.name = os.path.splitext(os.path.basename(self.path))[0]
        self._templates = {}  # seed -> the reference Model as built on the CPU, never run
        self._template_fingerprints = {}  # seed -> _model_fingerprint(its template) when it was kept
        self._draws = _host_draws_of(self)  # the trials' CPU draws (kernelbench_inputs), shared by source
        self._trial_device = None  # trial_inputs_device(), once known
        self._trial_bytes = None  # trial_input_bytes(), once known
        self._kept = None  # ((templates, draws' bytes, their users), kept_bytes()) as kept() last summed it
        _PROBLEMS.add(self)

    def _call(self, fn_name):
        try:
            return getattr(self.module, fn_name)()
        except Exception as exc:
            raise KagentError("problem_load_error", f"{fn_name}() failed: {short_exception(exc, self.path)}") from None

    def init_inputs(self):
        return list(self._call("get_init_inputs"))

    def make_model(self, device, seed=42, cls=None):
        """The model as KernelBench's harness builds it (eval_kernel_against_ref): seed,
        get_init_inputs() with its tensors moved to the device, seed again, the model built on
        the CPU (the default device) under no_grad, then moved to `device`. An answer that draws
        its weights on the CPU (nn.Parameter(torch.Tensor(...)) with nn.init, device="cpu") then
        gets the reference's numbers. `cls` defaults to the problem's Model, whose pristine CPU
        copy is kept per seed (deep copies of it are the same numbers without the init's cost).
        On "meta" the model is built there directly: the spec needs shapes only."""
        if device == "meta":
            torch.manual_seed(seed)
            with torch.device("meta"):
                return self._construct(cls, self.init_inputs())
        template = self._templates.get(seed) if cls is None else None
        if template is not None:
            try:
                return copy.deepcopy(template).to(device)
            except Exception:  # a model that cannot be copied is built again
                pass
        model = self._construct_seeded(cls, device, seed)
        if cls is None:
            self._keep_template(seed, model)
            try:
                return copy.deepcopy(model).to(device)
            except Exception:
                self._drop_template(seed)
        return model.to(device)

    def _keep_template(self, seed, model):
        self._templates[seed] = model
        self._template_fingerprints[seed] = _model_fingerprint(model)

    def _drop_template(self, seed):
        self._templates.pop(seed, None)
        self._template_fingerprints.pop(seed, None)

    def _construct_seeded(self, cls, device, seed):
        """KernelBench's order: seed, get_init_inputs() with its tensors moved to `device`, seed
        again, the model built on the CPU under no_grad."""
        kernelbench_seed(seed)
        init = [x.to(device) if isinstance(x, torch.Tensor) else x for x in self.init_inputs()]
        kernelbench_seed(seed)
        with torch.no_grad():
            return self._construct(cls, init)

    def _construct(self, cls, init):
        try:
            return (cls or self.module.Model)(*init)
        except KagentError:
            raise
        except Exception as exc:
            raise KagentError("problem_load_error", f"Model(...) failed: {short_exception(exc, self.path)}") from None

    def make_inputs(self, device, seed):
        """Inputs drawn on `device` from `seed` (the generator of that device): kagent's own
        evidence (guards, timing, baselines, profile) takes these, fast at any size."""
        torch.manual_seed(seed)
        with torch.device(device):
            inputs = list(self._call("get_inputs"))
        return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]

    def trial_seeds(self, seed, count):
        return trial_seeds(seed, count)

    def trial_inputs_device(self):
        """"cpu" where the trials draw their inputs as KernelBench does, "device" where the
        inputs are larger than CPU_TRIAL_INPUT_BYTES (sizes from a draw on meta, which costs
        nothing; a get_inputs() that cannot run there is drawn on the CPU)."""
        if self._trial_device is None:
            try:
                torch.manual_seed(0)
                with torch.device("meta"):
                    meta = list(self._call("get_inputs"))
                size = self._trial_bytes = tensor_bytes(meta)
                self._trial_device = "cpu" if size <= CPU_TRIAL_INPUT_BYTES else "device"
                if self._trial_device == "device":
                    print(f"kagent: {self.name}: inputs of {size / 2**20:.0f} MiB: the trials draw them on the GPU",
                          file=sys.stderr)
            except Exception:
                self._trial_device = "cpu"
        return self._trial_device

    def trial_input_bytes(self):
        """A trial's inputs in bytes, from trial_inputs_device()'s draw on meta; None where
        get_inputs() cannot run there."""
        self.trial_inputs_device()
        return self._trial_bytes

    def kernelbench_inputs(self, device, seed):
        """Inputs as KernelBench's harness draws a correctness trial's: seed, get_inputs() on
        the CPU, moved to `device` (KernelBench also casts them to its precision, fp32 by
        default; kagent keeps the problem's dtypes, which is the same for fp32 problems).
        The CPU draw is kept per seed while the kept sets stay small (HOST_INPUTS_BYTES): the
        next candidate's trials then cost a copy to the GPU, not the CPU's random numbers.
        Above CPU_TRIAL_INPUT_BYTES of inputs (KernelBench's newest official sizes, up to
        8.6 GB a set) the CPU's generator would cost seconds per gigabyte and trial: those
        trials draw on `device` from the same seeds (trial_inputs_device() says which)."""
        if self.trial_inputs_device() != "cpu":
            return self.make_inputs(device, seed)
        inputs = self._host_draw(seed)
        return [x.to(device, copy=True) if isinstance(x, torch.Tensor) else x for x in inputs]

    def _host_draw(self, seed, take_deadline=None):
        """A trial's inputs as KernelBench draws them on the CPU, kept while HOST_INPUTS_BYTES allows.
        A kept draw changed since it was kept is drawn again, and the change noted (take_modified):
        the trials are run after the candidate loaded, which could have changed them.
        `take_deadline`: until when to wait for the pool's drawer (draw_files.take)."""
        draws = self._draws
        inputs = draws.by_seed.get(seed)
        if inputs is not None and _fingerprint(inputs) != draws.fingerprints.get(seed):
            _MODIFIED.append(f"the kept CPU draw of the trial inputs of {self.name}, seed {seed}")
            draws.drop(seed)
            inputs = None
        if inputs is None:
            inputs = draw_files.take(self.sha256, seed, take_deadline)  # the pool's drawer made it, from the same seed
            if inputs is None:
                kernelbench_seed(seed)
                inputs = list(self._call("get_inputs"))
            size = tensor_bytes(inputs)
            if size + draws.bytes <= HOST_INPUTS_BYTES:
                inputs = [page_locked_copy(x) for x in inputs]
                draws.keep(seed, inputs, size)
        return inputs

    def prefetch(self, seed, trials=0):
        """The CPU's share of an evaluation of this problem, done ahead: the reference's CPU copy
        (make_model's template) and the trials' CPU draws (kernelbench_inputs). The worker calls
        it holding none of the GPU's timing lock, so that a sibling worker times meanwhile
        (worker/protocol/gpu_timing_lock.h): nothing here may touch the GPU. A model whose init
        inputs hold tensors is left to make_model (KernelBench moves them to the GPU first).
        Errors are left to the calls that need these objects, which report them in their phase.
        Returns the bytes this problem keeps on the host."""
        verify_kept()  # before the request's candidate runs: a change found now is an earlier one's
        try:
            if seed not in self._templates and not any(isinstance(x, torch.Tensor) for x in self.init_inputs()):
                self._keep_template(seed, self._construct_seeded(None, "cpu", seed))
            if trials > 0 and self.trial_inputs_device() == "cpu":
                deadline = draw_files.take_deadline()  # one wait for the drawer per problem, not per trial
                for s in self.trial_seeds(seed, trials):
                    self._host_draw(s, deadline)
        except Exception:
            pass
        return self.kept()

    def kept(self):
        """kept_bytes(), summed again only when something was added or the draws' users changed:
        the worker asks before every problem it opens, and prefetch before every evaluation."""
        state = (len(self._templates), self._draws.bytes, self._draws.users)
        if self._kept is None or self._kept[0] != state:
            self._kept = (state, self.kept_bytes())
        return self._kept[1]

    def kept_bytes(self):
        """Host memory this problem keeps: its share of its source's trial draws (summed over the
        worker's problems, each draw counts once) and the reference's CPU copies."""
        kept = self._draws.bytes // max(self._draws.users, 1)
        for model in self._templates.values():
            try:
                kept += tensor_bytes(list(model.state_dict().values()))
            except Exception:
                pass
        return kept

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
                raise KagentError("problem_load_error", f"Model.forward failed: {short_exception(exc, self.path)}") from None
        outputs, is_tuple = flatten_outputs(out)
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
            "outputs": [{"dtype": dtype_name(o.dtype), "shape": list(o.shape)} for o in outputs],
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


def preload():
    """Imports what a problem's first spec would (torch's meta registrations, dynamo, sympy,
    numpy.random: 1-4 s on a busy machine), at the worker's start, where CUDA starts beside it in
    another thread, instead of inside the first problem's load. After it a spec takes
    milliseconds."""
    import numpy.random  # noqa: F401  (torch.manual_seed's companions in KernelBench's files)
    import torch._dynamo  # noqa: F401
    with torch.device("meta"), torch.no_grad():
        torch.nn.Conv2d(3, 4, 3)(torch.empty(1, 3, 8, 8)).relu()


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


def load_kernelbench_candidate(path, problem, device, seed=42, extensions="{}"):
    """Executes a KernelBench-format answer (ModelNew, usually with load_inline) and builds
    ModelNew with the same seed as the reference, so modules get the same weights.

    extensions: JSON {"prebuilt": [...], "reasons": {...}, "gpu_lock_fd": n?, "gpu_turnstile_fd": n?,
                "gpu_turnstile_patience_s": s?} from the orchestrator
    and the worker (see inline_patch.InlineExtensions). Returns (model, the load_inline/load calls
    made: who built each extension and why)."""
    spec = json.loads(extensions or "{}")
    patch = InlineExtensions(spec.get("prebuilt", []), spec.get("reasons", {}), spec.get("gpu_lock_fd"),
                             spec.get("gpu_turnstile_fd"), spec.get("gpu_turnstile_patience_s", TURNSTILE_PATIENCE_S))
    with patch:
        try:
            # Run as KernelBench's harness runs it: after the problem's source, in its names
            # (a copy: what the answer rebinds does not change the problem's inputs here).
            module = exec_file(os.path.abspath(path), "candidate_load_error", inherit=vars(problem.module))
        except KagentError as err:
            text = err.message
            # load_inline raises "Error building extension ...": that is a compile error.
            if err.kind == "candidate_load_error" and (
                    "Error building extension" in text or "error:" in text and "ninja" in text.lower()):
                raise KagentError("compile_error", text) from None
            raise
        if not hasattr(module, "ModelNew"):
            raise KagentError("invalid", "the candidate defines no class ModelNew")
        try:
            model = problem.make_model(device, seed=seed, cls=module.ModelNew)
        except KagentError as err:
            raise KagentError("candidate_load_error", err.message.replace("Model(...)", "ModelNew(...)")) from None
    return model, patch.records


def compiled_model(model):
    return torch.compile(model)
