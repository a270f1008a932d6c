"""Static checks of a KernelBench-format candidate's source (its AST): except handlers that
fall back to PyTorch, threads, and PyTorch compute in ModelNew.forward."""

import ast

import torch

from kagent_worker.guards import finding

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
                    findings.append(finding(
                        "try_except_fallback", "reject",
                        f"the except handler at line {handler.lineno} computes with PyTorch ({', '.join(ops[:3])}): "
                        "failures of the custom code fall back to the reference's own ops"))
    threads = scan.thread_imports()
    if threads:
        findings.append(finding("threads", "reject",
                                 f"uses {', '.join(threads[:3])}: work on other threads or processes escapes the "
                                 "timer and races the checks"))
    forward = scan.methods.get("forward")
    if forward is not None:
        ops = scan.compute_ops(forward.body)
        if ops:
            findings.append(finding("torch_ops_in_forward", "flag",
                                     f"ModelNew.forward computes with PyTorch: {', '.join(ops[:4])}"
                                     + (f" and {len(ops) - 4} more" if len(ops) > 4 else "")))
    return findings
