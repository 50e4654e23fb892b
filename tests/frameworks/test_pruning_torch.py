"""Chapter 08's pruning section: what it says PyTorch 2.13 does, run in PyTorch with the real
``torch.nn.utils.prune``.

The chapter prunes half of a trained layer's weight and keeps the zeros four ways; these tests
do the same in PyTorch (the kit's ``weight_orig * mask`` layer is ``prune.l1_unstructured``
here) and check the same pattern of zeros, for several seeds.
"""
from __future__ import annotations

import pytest
import torch
from claims import claim
from torch.nn.utils import prune      # `import torch` alone does not import it

F = torch.nn.functional

OPTIMIZERS = {
    "SGD": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "SGD, momentum 0.9": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "SGD, weight_decay 0.1": lambda ps: torch.optim.SGD(ps, lr=0.1, weight_decay=0.1),
    "Adam": lambda ps: torch.optim.Adam(ps, lr=0.1),
}
WAYS = ("zeros once", "mask the gradient", "mask after each step", "weight_orig * mask")
#: the (way, optimizer) pairs whose pruned entries the chapter says move again
LEAKS = {("zeros once", label) for label in OPTIMIZERS} | {
    ("mask the gradient", "SGD, momentum 0.9"), ("mask the gradient", "Adam")}


def batch():
    torch.manual_seed(1)
    return torch.randn(32, 3), torch.randn(32, 1)


def train_step(net, opt, x, y):
    opt.zero_grad()
    F.mse_loss(net(x), y).backward()
    opt.step()


def trained_net(make_optimizer, seed, steps=3):
    """The chapter's network, trained ``steps`` steps (so the optimizer has gathered state)."""
    x, y = batch()
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opt = make_optimizer(net.parameters())
    for _ in range(steps):
        train_step(net, opt, x, y)
    return net, opt, (x, y)


def l1_mask(weight, amount=0.5):
    """The chapter's magnitude_mask: 0 at the half of the entries smallest in |w|."""
    order = weight.detach().abs().flatten().argsort(stable=True)
    mask = torch.ones(weight.numel())
    mask[order[:round(amount * weight.numel())]] = 0.0
    return mask.reshape(weight.shape)


def pruned_entries(make_optimizer, way, seed, steps=3):
    """The chapter's pruned_entries in PyTorch: (largest |entry| of the weight the forward pass
    uses at the pruned entries, largest move of the parameter there, its largest |gradient|)."""
    net, opt, (x, y) = trained_net(make_optimizer, seed, steps)
    layer = net[0]
    param = layer.weight
    if way == "weight_orig * mask":
        prune.l1_unstructured(layer, "weight", amount=0.5)
        mask = layer.weight_mask
    else:
        mask = l1_mask(param)
        with torch.no_grad():
            param.mul_(mask)
    if way == "mask the gradient":
        param.register_hook(lambda grad: grad * mask)
    at_pruning = param.detach().clone()
    for _ in range(steps):
        train_step(net, opt, x, y)
        if way == "mask after each step":
            with torch.no_grad():
                param.mul_(mask)
    pruned = mask == 0
    used = layer.weight.detach() if way != "weight_orig * mask" else (param * mask).detach()
    return (used[pruned].abs().max().item(), (param.detach() - at_pruning)[pruned].abs().max().item(),
            param.grad[pruned].abs().max().item())


@claim("torch-pruning-weight-orig-times-mask")
def test_l1_unstructured_renames_the_same_parameter_adds_a_mask_and_a_pre_hook():
    net, opt, (x, _) = trained_net(lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), seed=0)
    layer, weight = net[0], net[0].weight
    prune.l1_unstructured(layer, "weight", amount=0.5)
    assert layer.weight_orig is weight                                  # the same tensor
    assert "momentum_buffer" in opt.state[layer.weight_orig]           # and its state
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in layer.named_buffers()] == ["weight_mask"]
    assert int((layer.weight_mask == 0).sum()) == weight.numel() // 2  # amount=0.5: half
    assert torch.equal(layer.weight_mask, l1_mask(weight))              # the smallest |w|
    assert not isinstance(layer.weight, torch.nn.Parameter)             # a plain tensor now
    hooks = list(layer._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.BasePruningMethod)
    with torch.no_grad():
        layer.weight_orig.add_(1.0)                     # change the parameter...
    layer(x)                                            # ...and the forward recomputes weight
    assert torch.equal(layer.weight, layer.weight_orig * layer.weight_mask)


@claim("torch-pruning-leaks")
@pytest.mark.parametrize("label", list(OPTIMIZERS))
def test_the_zeros_survive_the_same_ways_as_in_the_chapter(label):
    for seed in range(5):
        for way in WAYS:
            used, _, _ = pruned_entries(OPTIMIZERS[label], way, seed)
            assert (used > 0) == ((way, label) in LEAKS), (seed, label, way, used)


@claim("torch-pruning-weight-orig-times-mask", "torch-pruning-leaks")
@pytest.mark.parametrize("label", list(OPTIMIZERS))
def test_weight_orig_gets_a_zero_gradient_there_yet_moves_by_momentum_decay_and_adam(label):
    for seed in range(5):
        used, param_moved, grad = pruned_entries(OPTIMIZERS[label], "weight_orig * mask", seed)
        assert used == 0 and grad == 0
        assert (param_moved > 0) == (label != "SGD"), (seed, label, param_moved)


@claim("torch-pruning-is-pruned")
def test_is_pruned_looks_at_every_layer_of_the_model():
    net, _, _ = trained_net(lambda ps: torch.optim.SGD(ps, lr=0.1), seed=0)
    assert not prune.is_pruned(net)
    prune.l1_unstructured(net[2], "weight", amount=0.5)        # the last layer only
    assert prune.is_pruned(net) and prune.is_pruned(net[2]) and not prune.is_pruned(net[0])
    prune.remove(net[2], "weight")
    assert not prune.is_pruned(net)


@claim("torch-pruning-remove-unprotects")
@pytest.mark.parametrize("label", list(OPTIMIZERS))
def test_remove_keeps_the_same_tensor_and_state_and_then_the_zeros_move(label):
    net, opt, (x, y) = trained_net(OPTIMIZERS[label], seed=0)
    layer, weight = net[0], net[0].weight
    prune.l1_unstructured(layer, "weight", amount=0.5)
    train_step(net, opt, x, y)
    pruned = layer.weight_mask == 0
    product = (layer.weight_orig * layer.weight_mask).detach().clone()
    state = opt.state[weight]
    prune.remove(layer, "weight")
    assert layer.weight is weight and isinstance(layer.weight, torch.nn.Parameter)
    assert torch.equal(layer.weight.detach(), product)          # holds weight_orig * weight_mask
    assert opt.state[layer.weight] is state                      # the optimizer keeps its state
    assert [n for n, _ in layer.named_buffers()] == [] and not layer._forward_pre_hooks
    assert not layer.weight.detach()[pruned].any()               # zeros, for now
    train_step(net, opt, x, y)
    assert layer.weight.detach()[pruned].abs().min() > 0        # the next step moves them all
