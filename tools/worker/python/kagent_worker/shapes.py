"""Extra input shapes for the shape_generalization guard: a candidate that is right only at
the benchmark's sizes (constants baked into its kernel) must be wrong somewhere else.

A problem may list its own (get_extra_inputs()). KernelBench problems do not, so they are
derived: the module-level integers that get_inputs() reads and neither get_init_inputs() nor
the Model class reads (batch_size, dim1, ...) are rebound to smaller, odd values while
get_inputs() runs. What the model is built from stays as it is, so the reference keeps its
meaning; only the inputs' sizes change.
"""

import types

import torch

from kagent_worker.loading import short_exception

MAX_SETS = 2


def _code_names(code):
    names, stack = set(), [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return names


def _functions_of(obj, module):
    """The plain functions a module-level function or a class of the module holds (methods,
    properties; inherited ones only from the module's own classes: nn.Module's code names
    attributes like `dim` that are not the problem's globals)."""
    if isinstance(obj, types.FunctionType):
        return [obj]
    found = []
    for klass in getattr(obj, "__mro__", ()):
        if klass.__module__ != module.__name__:
            continue
        for value in vars(klass).values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                found += [f for f in (value.fget, value.fset) if f]
            elif isinstance(value, types.FunctionType):
                found.append(value)
    return found


def _reads(module, roots):
    """Module globals the roots read, following calls into the module's own functions and classes."""
    seen, names, stack = set(), set(), list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        for fn in _functions_of(obj, module):
            for name in _code_names(fn.__code__):
                names.add(name)
                value = vars(module).get(name)
                if isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", None) == module.__name__:
                    stack.append(value)
    return names


def rebindable_sizes(module):
    """{name: value} of the integers only get_inputs() depends on."""
    wanted = _reads(module, [module.get_inputs])
    fixed = _reads(module, [module.get_init_inputs, module.Model])
    return {n: v for n, v in vars(module).items()
            if n in wanted and n not in fixed and type(v) is int and v > 1}


def smaller_odd(v):
    """About half of v, odd, at least 1 and below v: 4096 -> 2047, 16 -> 7, 3 -> 1, 2 -> 1."""
    n = max(1, v // 2 - 1)
    if n % 2 == 0:
        n += 1
    return n if n < v else max(1, v - 2) if v > 2 else 1


def _inputs_with(problem, device, seed, values):
    module = problem.module
    saved = {n: getattr(module, n) for n in values}
    try:
        for n, v in values.items():
            setattr(module, n, v)
        return problem.make_inputs(device, seed)
    finally:
        for n, v in saved.items():
            setattr(module, n, v)


def extra_inputs(problem, model, device, seed):
    """{"sets": [input lists], "note": how they were made, or why there are none}. Each derived
    set is kept only if the reference runs on it."""
    module = problem.module
    if hasattr(module, "get_extra_inputs"):
        torch.manual_seed(seed)
        with torch.device(device):
            sets = [list(s) for s in problem._call("get_extra_inputs")]
        sets = [[x.to(device) if isinstance(x, torch.Tensor) else x for x in s] for s in sets]
        return {"sets": sets, "note": "get_extra_inputs()" if sets else "get_extra_inputs() returned no set"}
    sizes = rebindable_sizes(module)
    if not sizes:
        return {"sets": [], "note": "sizes cannot be varied: get_inputs() reads no module-level integer that the "
                                    "model does not also depend on"}
    trials = [{n: smaller_odd(v) for n, v in sizes.items()}]
    if len(sizes) > 1:
        trials += [{n: smaller_odd(v)} for n, v in sizes.items()]
    sets, made, failures = [], [], []
    for values in trials:
        if len(sets) == MAX_SETS:
            break
        try:
            inputs = _inputs_with(problem, device, seed, values)
            with torch.no_grad():
                model(*inputs)
        except Exception as exc:  # the reference cannot take these sizes: try the next
            failures.append(f"{', '.join(f'{n}={v}' for n, v in values.items())}: {short_exception(exc, problem.path)}")
            continue
        sets.append(inputs)
        made.append(", ".join(f"{n} {sizes[n]} -> {v}" for n, v in values.items()))
        if len(values) == len(sizes):
            break  # every size varied at once is enough
    if not sets:
        return {"sets": [], "note": "sizes cannot be varied: the reference fails at every derived size ("
                                    + "; ".join(failures)[:400] + ")"}
    return {"sets": sets, "note": "derived: " + "; ".join(made)}
