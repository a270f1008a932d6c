"""Plain tensor state (module_state.py): snapshot, restore and detection on the CPU."""

import torch

from kagent_worker.module_state import changed_state, plain_tensor_state, restore_state


class VanillaRnn(torch.nn.Module):
    """KernelBench level 3 #33 in small: forward replaces self.hidden on every call."""

    def __init__(self):
        super().__init__()
        self.hidden = torch.randn(2, 4)
        self.i2h = torch.nn.Linear(3 + 4, 4)

    def forward(self, x):
        self.hidden = self.hidden.to(x.device)
        self.hidden = torch.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))
        return self.hidden * 2


class InPlaceRnn(VanillaRnn):
    def forward(self, x):
        self.hidden.add_(x.sum())
        return self.hidden.clone()


class MovesH0(torch.nn.Module):
    """KernelBench's LSTM problems: h0 is a plain tensor that forward only moves."""

    def __init__(self):
        super().__init__()
        self.h0 = torch.randn(1, 2, 4)
        self.c0 = torch.randn(1, 2, 4)
        self.lstm = torch.nn.LSTM(3, 4, batch_first=True)

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        self.c0 = self.c0.to(x.device, dtype=x.dtype)
        out, _ = self.lstm(x.unsqueeze(1), (self.h0, self.c0))
        return out


class ParamsAndBuffers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(3)  # training mode: forward writes its running stats
        self.register_buffer("steps", torch.zeros(()))
        self.scale = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        self.steps += 1
        return self.bn(x) * self.scale


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = VanillaRnn()

    def forward(self, x):
        return self.cell(x)


def x():
    return torch.randn(2, 3)


def test_a_recurrent_plain_attribute_is_stateful_and_restored():
    torch.manual_seed(0)
    model = VanillaRnn()
    snapshot = plain_tensor_state(model)
    assert list(snapshot) == [("", "hidden")]
    inputs = x()
    first = model(inputs)
    assert changed_state(model, snapshot) == ["VanillaRnn.hidden"]
    assert not torch.equal(model(inputs), first)  # the output depends on the calls before it
    restore_state(model, snapshot)
    assert changed_state(model, snapshot) == []
    assert torch.equal(model(inputs), first)


def test_restore_puts_clones_back():
    torch.manual_seed(0)
    model = InPlaceRnn()
    snapshot = plain_tensor_state(model)
    assert snapshot[("", "hidden")] is not model.hidden  # the snapshot is a clone already
    inputs = x()
    first = model(inputs)
    assert changed_state(model, snapshot) == ["InPlaceRnn.hidden"]
    for _ in range(2):  # in-place writes land in the restored clone, never in the snapshot
        restore_state(model, snapshot)
        assert torch.equal(model(inputs), first)


def test_a_submodule_state_is_named_by_its_path():
    torch.manual_seed(0)
    model = Outer()
    snapshot = plain_tensor_state(model)
    assert list(snapshot) == [("cell", "hidden")]
    model(x())
    assert changed_state(model, snapshot) == ["Outer.cell.hidden"]
    restore_state(model, snapshot)
    assert changed_state(model, snapshot) == []


def test_moving_h0_to_the_device_is_not_stateful():
    torch.manual_seed(0)
    model = MovesH0()
    snapshot = plain_tensor_state(model)
    assert sorted(snapshot) == [("", "c0"), ("", "h0")]
    model(x())
    model(x())
    assert changed_state(model, snapshot) == []


def test_parameters_and_buffers_are_not_plain_state():
    torch.manual_seed(0)
    model = ParamsAndBuffers()
    assert plain_tensor_state(model) == {}
    snapshot = plain_tensor_state(model)
    model(x())
    assert model.steps.item() == 1  # forward did change a buffer: not this module's concern
    assert changed_state(model, snapshot) == []


def test_a_changed_shape_or_dtype_or_a_removed_attribute_is_a_change():
    model = VanillaRnn()
    snapshot = plain_tensor_state(model)
    model.hidden = model.hidden.double()
    assert changed_state(model, snapshot) == ["VanillaRnn.hidden"]
    model.hidden = torch.zeros(3, 4)
    assert changed_state(model, snapshot) == ["VanillaRnn.hidden"]
    del model.hidden
    assert changed_state(model, snapshot) == ["VanillaRnn.hidden"]
    restore_state(model, snapshot)
    assert changed_state(model, snapshot) == []
