"""The precision guard's Python side: the inputs it measures on and the float64 truth.

An fp32 problem computed in half, bf16 or TF32 still passes the 1e-2 tolerance, so the
candidate and eager PyTorch are compared against a float64 run of the reference. Two things
make lowered precision show: inputs of mixed signs (sums of same-signed terms hide input
rounding: a 4096-long fp16 dot product of torch.rand values is off by 3e-5 relative, of
mixed-sign values by 5e-4), and truths computed from inputs rounded to fewer mantissa bits,
which a candidate that rounded its inputs matches far better than the exact truth.
"""

import torch
from torch.func import functional_call

from kagent_worker.problem import dtype_name, flatten_outputs, tensor_bytes

# Rounding hypotheses: mantissa bits kept. 10 bits is fp16's and TF32's, 7 is bf16's.
ROUNDINGS = {"tf32": 10, "bfloat16": 7}
_MANTISSA = {torch.float32: 23, torch.float64: 52, torch.float16: 10, torch.bfloat16: 7}


def round_mantissa(t, rounding):
    """`t` rounded (to nearest, ties to even) to the mantissa of `rounding`, in t's dtype."""
    if rounding == "bfloat16":
        return t.to(torch.bfloat16).to(t.dtype)
    # TF32: fp32's exponent, 10 mantissa bits (fp16's mantissa without fp16's narrow range).
    i = t.to(torch.float32).contiguous().view(torch.int32)
    dropped = 13
    i = (i + ((1 << (dropped - 1)) - 1) + ((i >> dropped) & 1)) & ~((1 << dropped) - 1)
    return i.view(torch.float32).to(t.dtype)


def roundings_for(dtype):
    """The hypotheses that lose precision against a `dtype` problem (none for bf16)."""
    bits = _MANTISSA.get(dtype, 0)
    return [name for name, kept in ROUNDINGS.items() if kept < bits]


def reference_fp64(model, inputs, rounding=None, scope="all"):
    """The reference run in float64: its floating parameters, buffers and inputs cast to double,
    first rounded to `rounding`'s mantissa for `scope` ("all", "inputs", "params") when given.
    The model itself is not copied or changed (its state is passed to functional_call), so the
    extra memory is the double copies alone. Returns the outputs, or a string saying why there
    is no fp64 truth (an op without a double kernel, a model that casts back to float itself)."""
    def cast(t, is_param):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            return t
        t = t.detach()
        if rounding and scope in ("all", "params" if is_param else "inputs"):
            t = round_mantissa(t, rounding)
        return t.double()
    try:
        state = {k: cast(v, True) for k, v in model.state_dict(keep_vars=True).items()}
        args = tuple(cast(x, False) for x in inputs)
        with torch.no_grad():
            outputs, _ = flatten_outputs(functional_call(model, state, args))
    except Exception as exc:  # whatever the model does in double, it is only a missing check
        return f"the reference does not run in float64: {type(exc).__name__}: {exc}"
    for i, o in enumerate(outputs):
        if isinstance(o, torch.Tensor) and o.is_floating_point() and o.dtype != torch.float64:
            return f"output {i} of the float64 reference is {dtype_name(o.dtype)} (the model casts)"
    return outputs


def _cut(values, lead, keep):
    return [v.narrow(0, 0, keep).clone() if isinstance(v, torch.Tensor) and v.dim() > 0 and v.shape[0] == lead
            else v for v in values]


def precision_inputs(problem, model, device, seed, max_bytes):
    """Inputs for the precision guard, and a note on how they were made: fresh ones from
    `seed`; cut along the leading dimension when they, or they and the outputs they make, are
    larger than `max_bytes` (the fp64 runs cost twice the inputs, parameters and outputs each,
    and a small-K matmul makes 4 GB from 16 MB); each floating element's sign drawn at random,
    unless the reference then gives non-finite outputs (a log, a square root), when the plain
    inputs are kept."""
    inputs = problem.make_inputs(device, seed)
    notes = []
    total = tensor_bytes(inputs)
    lead = next((v.shape[0] for v in inputs if isinstance(v, torch.Tensor) and v.dim() > 0), None)
    full = lead
    if total > max_bytes and lead:
        keep = max(1, lead * max_bytes // total)
        inputs, lead = _cut(inputs, lead, keep), keep
    g = torch.Generator(device=device).manual_seed(seed)
    signed = []
    for v in inputs:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            sign = torch.randint(0, 2, v.shape, generator=g, device=device, dtype=v.dtype).mul_(2).sub_(1)
            v = v * sign
        signed.append(v)
    with torch.no_grad():
        try:
            outputs, _ = flatten_outputs(model(*signed))
            finite = all(o.isfinite().float().mean().item() >= 0.99 for o in outputs
                         if isinstance(o, torch.Tensor) and o.is_floating_point() and o.numel() > 0)
            total = tensor_bytes(signed) + tensor_bytes(outputs)
            del outputs
        except Exception:
            finite = False
    if finite and total > max_bytes and lead and lead > 1:
        keep = max(1, lead * max_bytes // total)
        signed, lead = _cut(signed, lead, keep), keep  # only `signed` is returned on this path
    if lead != full:
        notes.append(f"inputs cut from {full} to {lead} along dimension 0")
    if finite:
        notes.append("signs drawn at random")
        return signed, "; ".join(notes)
    notes.append("plain inputs (the reference is not finite on mixed signs)")
    return inputs, "; ".join(notes)
