"""Plain tensor state: tensors a module keeps as ordinary attributes, not as parameters, buffers
or submodules. Some problems keep a recurrent state there that forward replaces on every call
(KernelBench level 3's VanillaRNN: `self.hidden = torch.tanh(...)`), so an output depends on how
many calls came before it. The worker snapshots it when a model is built and, for a problem whose
forward changes it, puts the snapshot back before every compared call of both sides.

Parameters and buffers are left out on purpose: BatchNorm's running statistics are the guards'
concern (reference_writes), and outputs in training mode do not depend on them."""

import torch


def plain_tensor_state(model):
    """{(module name, attribute): a clone} of every tensor held in the __dict__ of one of the
    model's modules (parameters, buffers and submodules live in their own dicts, not there)."""
    state = {}
    for prefix, module in model.named_modules():
        for attr, value in vars(module).items():
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                state[(prefix, attr)] = value.detach().clone()
    return state


def restore_state(model, snapshot):
    """Puts clones of the snapshot back where they were taken (the modules' __dict__): what
    forward then writes in place lands in the clone, never in the snapshot."""
    modules = dict(model.named_modules())
    for (prefix, attr), value in snapshot.items():
        if prefix in modules:
            vars(modules[prefix])[attr] = value.clone()


def _same(before, now):
    """Equal in value: a move to another device (`self.h0 = self.h0.to(x.device)`) is no change."""
    if not isinstance(now, torch.Tensor) or now.shape != before.shape or now.dtype != before.dtype:
        return False
    return torch.equal(now.detach().cpu(), before.cpu())


def changed_state(model, snapshot):
    """The names ("Model.hidden", "Model.cell.h") of the snapshot's attributes whose value the
    model holds no longer: a model is stateful when a forward call made this non-empty."""
    modules = dict(model.named_modules())
    root = type(model).__name__
    changed = []
    for (prefix, attr), before in snapshot.items():
        now = vars(modules[prefix]).get(attr) if prefix in modules else None
        if not _same(before, now):
            changed.append(".".join(p for p in (root, prefix, attr) if p))
    return changed
