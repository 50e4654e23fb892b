"""Parameter, Module, containers and layers: registration, names, tying, state dicts, modes."""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn
from dltutor.nn import functional as F

import marked_backend


def mlp():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def snapshot(model):
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}


# --- Parameter ----------------------------------------------------------------------------------
def test_parameter_defaults_and_attributes():
    p = nn.Parameter(dt.zeros(2, 3))
    assert p.requires_grad and p.lr_mult == 1.0 and p.regularizer is None and p.need_clip
    assert p.is_leaf and isinstance(p, dt.Tensor)


def test_parameter_from_tensor_shares_memory_and_from_array_copies():
    t = dt.zeros(3)
    assert np.shares_memory(nn.Parameter(t).data, t.data)
    a = np.zeros(3, np.float32)
    assert not np.shares_memory(nn.Parameter(a).data, a)


def test_set_value_copies_in_place_and_checks_shape():
    p = nn.Parameter(dt.zeros(2, 2))
    alias, data = p, p.data
    p.set_value(np.ones((2, 2), np.float64))
    assert alias.data is data and p.dtype == np.float32 and p.tolist() == [[1, 1], [1, 1]]
    with pytest.raises(ValueError, match=r"parameter has shape \(2, 2\).*new value has shape \(4,\)"):
        p.set_value(np.ones(4))


def test_parameter_repr_names_non_default_attributes():
    p = nn.Parameter(dt.zeros(2), lr_mult=2.0, need_clip=False)
    first = repr(p).splitlines()[0]
    assert first == "Parameter(shape=(2,), dtype=float32, lr_mult=2, need_clip=False)"


@pytest.mark.parametrize("bad", [-1.0, "2", None, True])
def test_lr_mult_must_be_a_non_negative_number(bad):
    with pytest.raises(ValueError, match="lr_mult must be a number >= 0"):
        nn.Parameter(dt.zeros(1), lr_mult=bad)


def test_integer_parameter_is_refused():
    with pytest.raises(TypeError, match="floating-point"):
        nn.Parameter([1, 2])


# --- registration and names -----------------------------------------------------------------------
class TwoStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(dt.ones(3))
        self.first = nn.Linear(3, 3)
        self.register_buffer("steps", dt.zeros(1))
        self.second = nn.Linear(3, 2)

    def forward(self, x):
        return self.second(self.first(x * self.scale))


def test_registration_order_and_dotted_names():
    m = TwoStage()
    assert [n for n, _ in m.named_parameters()] == [
        "scale", "first.weight", "first.bias", "second.weight", "second.bias"]
    assert list(m.state_dict()) == ["scale", "steps", "first.weight", "first.bias",
                                    "second.weight", "second.bias"]
    assert [n for n, _ in m.named_modules()] == ["", "first", "second"]
    assert [n for n, _ in m.named_children()] == ["first", "second"]
    assert [n for n, _ in m.named_buffers()] == ["steps"]


def block():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4), nn.ReLU())


def test_nested_block_names_like_d2l():
    def block2():
        net = nn.Sequential()
        for i in range(4):
            net.add_module(f"block {i}", block())
        return net

    rgnet = nn.Sequential(block2(), nn.Linear(4, 1))
    names = [n for n, _ in rgnet.named_parameters()]
    assert names[:2] == ["0.block 0.0.weight", "0.block 0.0.bias"]
    assert names[-2:] == ["1.weight", "1.bias"]
    bias = rgnet[0].state_dict()["block 0.0.bias"]
    np.testing.assert_array_equal(bias.numpy(), rgnet[0][0][0].bias.numpy())
    assert rgnet.get_parameter("0.block 1.2.weight") is rgnet[0][1][2].weight
    assert "(block 0): Sequential(" in repr(rgnet)


def test_names_with_dots_are_refused():
    with pytest.raises(KeyError, match="contain no '.'"):
        nn.Sequential().add_module("a.b", nn.ReLU())


def test_assigning_before_super_init_explains():
    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(dt.ones(1))

    with pytest.raises(AttributeError, match="super\\(\\).__init__\\(\\) first"):
        Forgot()


def test_assigning_a_tensor_to_a_parameter_slot_explains():
    layer = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="assign an nn.Parameter.*set_value"):
        layer.weight = dt.zeros(2, 2)


def test_unknown_attribute_lists_what_exists():
    with pytest.raises(AttributeError, match="Linear has no attribute 'weights'.*weight, bias"):
        nn.Linear(2, 2).weights  # noqa: B018 - looking the name up is what must raise


def test_parameter_can_be_replaced_and_removed():
    layer = nn.Linear(2, 2)
    layer.bias = None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    layer.bias = nn.Parameter(dt.zeros(2))
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]


@pytest.mark.parametrize("how", ["assign", "register"])
def test_replacing_a_parameter_keeps_its_place(how):
    layer, other = nn.Linear(2, 3), nn.Linear(2, 3)
    if how == "assign":
        layer.weight = other.weight                      # as PyTorch: weight stays before bias
    else:
        layer.register_parameter("weight", other.weight)
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    assert list(layer.state_dict()) == ["weight", "bias"]
    assert layer.weight is other.weight


def test_replacing_a_submodule_keeps_its_place():
    net = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1))
    replacement = nn.Linear(1, 2)
    net.add_module("0", replacement)
    assert [n for n, _ in net.named_children()] == ["0", "1", "2"]
    assert net[0] is replacement


# --- tying --------------------------------------------------------------------------------------
def tied_net():
    shared = nn.Linear(8, 8)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(),
                         nn.Linear(8, 1)), shared


def test_tied_parameter_listed_once_but_in_the_state_dict_under_both_names():
    net, shared = tied_net()
    names = [n for n, _ in net.named_parameters()]
    assert "2.weight" in names and "4.weight" not in names
    assert len(list(net.parameters())) == 6
    state = net.state_dict()
    assert "2.weight" in state and "4.weight" in state
    assert np.shares_memory(state["2.weight"].data, state["4.weight"].data)
    assert net[2].weight is net[4].weight
    every = [n for n, _ in net.named_parameters(remove_duplicate=False)]
    assert "4.weight" in every


def test_gradient_of_a_shared_layer_is_the_sum_of_its_two_uses():
    dt.manual_seed(1)
    x = dt.randn(5, 8)
    shared = nn.Linear(8, 8)
    h1 = shared(x)
    out = shared(dt.tanh(h1)).sum()
    out.backward()
    total = shared.weight.grad.numpy().copy()
    # The same computation with two separate copies of the layer: their grads must add up.
    a, b = nn.Linear(8, 8), nn.Linear(8, 8)
    a.load_state_dict(shared.state_dict())
    b.load_state_dict(shared.state_dict())
    b(dt.tanh(a(x))).sum().backward()
    np.testing.assert_allclose(total, a.weight.grad.numpy() + b.weight.grad.numpy(), rtol=1e-5)


def test_a_hook_on_a_tied_parameter_fires_once_with_the_sum():
    net, shared = tied_net()
    seen = []
    shared.weight.register_hook(lambda g: seen.append(g.numpy().copy()))
    net(dt.randn(3, 4)).sum().backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], shared.weight.grad.numpy())


def test_loading_a_state_dict_keeps_the_tie():
    net, shared = tied_net()
    other, _ = tied_net()
    net.load_state_dict(other.state_dict())
    assert net[2].weight is net[4].weight
    np.testing.assert_array_equal(net[4].weight.numpy(), other[2].weight.numpy())


# --- load_state_dict ------------------------------------------------------------------------------
def test_load_state_dict_reports_everything_and_changes_nothing():
    net = mlp()
    before = snapshot(net)
    state = mlp().state_dict()
    del state["2.bias"]
    state["fc.weight"] = dt.zeros(1)
    state["0.weight"] = dt.zeros(4, 8)  # transposed: shape mismatch
    with pytest.raises(nn.StateDictError) as info:
        net.load_state_dict(state)
    message = str(info.value)
    assert "'2.bias'" in message and "'fc.weight'" in message
    assert "'0.weight': model (8, 4), state dict (4, 8)" in message
    assert "nothing was changed" in message
    after = snapshot(net)
    for key in before:
        np.testing.assert_array_equal(before[key], after[key])


def test_strict_false_returns_missing_and_unexpected_keys():
    net = mlp()
    source = mlp()
    state = source.state_dict()
    del state["2.bias"]
    state["extra"] = dt.zeros(1)
    result = net.load_state_dict(state, strict=False)
    assert result.missing_keys == ["2.bias"] and result.unexpected_keys == ["extra"]
    np.testing.assert_array_equal(net[0].weight.numpy(), source[0].weight.numpy())


def test_shape_mismatch_is_an_error_even_when_not_strict():
    net = mlp()
    state = net.state_dict()
    state["0.bias"] = dt.zeros(3)
    with pytest.raises(nn.StateDictError, match="shape mismatches"):
        net.load_state_dict(state, strict=False)


def test_load_accepts_numpy_arrays_and_converts_dtype():
    layer = nn.Linear(2, 1)
    layer.load_state_dict({"weight": np.ones((1, 2)), "bias": np.zeros(1)})
    assert layer.weight.dtype == np.float32 and layer.weight.tolist() == [[1.0, 1.0]]


def test_state_dict_values_are_detached_views():
    layer = nn.Linear(2, 1)
    w = layer.state_dict()["weight"]
    assert not w.requires_grad and np.shares_memory(w.data, layer.weight.data)
    assert layer.state_dict(keep_vars=True)["weight"] is layer.weight


def test_export_one_layer_and_load_it_into_another():
    net = mlp()
    last = nn.Linear(8, 1)
    last.load_state_dict(net[2].state_dict())
    np.testing.assert_array_equal(last.weight.numpy(), net[2].weight.numpy())


# --- modes and bulk operations --------------------------------------------------------------------
def test_apply_visits_children_first_then_self():
    order = []
    mlp().apply(lambda m: order.append(type(m).__name__))
    assert order == ["Linear", "ReLU", "Linear", "Sequential"]


def test_train_eval_switch_every_submodule():
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())


def test_zero_grad_sets_none_and_requires_grad_freezes():
    net = mlp()
    net(dt.randn(2, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net[0].requires_grad_(False)
    net(dt.randn(2, 4)).sum().backward()
    assert net[0].weight.grad is None and net[2].weight.grad is not None


def test_detach_between_two_stages_leaves_the_first_stage_without_grads():
    stage1, stage2 = nn.Linear(3, 3), nn.Linear(3, 1)
    stage2(stage1(dt.randn(4, 3)).detach()).sum().backward()
    assert stage1.weight.grad is None and stage1.bias.grad is None
    assert stage2.weight.grad is not None


def test_forward_hook_sees_inputs_and_output_and_can_replace_it():
    layer = nn.Linear(2, 2)
    calls = []

    def hook(module, inputs, output):
        calls.append((module, inputs[0].shape, output.shape))
        return output * 0

    handle = layer.register_forward_hook(hook)
    assert layer(dt.ones(3, 2)).abs().sum().item() == 0
    assert calls == [(layer, (3, 2), (3, 2))]
    handle.remove()
    assert layer(dt.ones(3, 2)).abs().sum().item() > 0


def test_to_moves_parameters_in_place_keeping_identity():
    marked_backend.register()
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    weight = net[0].weight
    net.to("marked")
    assert net[0].weight is weight
    assert all(isinstance(t.data, marked_backend.Marked)
               for t in list(net.parameters()) + list(net.buffers()))
    net.to("cpu")
    assert type(net[0].weight.data) is np.ndarray


def test_double_and_float_cast_floats_in_place_keeping_identity():
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    weight = net[0].weight
    net(dt.randn(4, 2)).sum().backward()
    net.double()
    assert net[0].weight is weight and weight.dtype == np.float64 and weight.grad.dtype == np.float64
    assert net[1].running_mean.dtype == np.float64
    assert net[1].num_batches_tracked.dtype.kind == "i"           # integers stay integers
    assert net(dt.tensor(np.ones((4, 2)))).dtype == np.float64
    net.float()
    assert weight.dtype == np.float32 and net[1].running_var.dtype == np.float32


def test_repr_is_an_indented_tree():
    net = nn.Sequential(nn.Linear(4, 8), nn.Sequential(nn.ReLU(), nn.Linear(8, 1)))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
        "  (1): Sequential(\n"
        "    (0): ReLU()\n"
        "    (1): Linear(in_features=8, out_features=1, bias=True)\n"
        "  )\n"
        ")")
    assert "(scale): Parameter(shape=(3,))" in repr(TwoStage())


# --- containers -----------------------------------------------------------------------------------
def test_sequential_indexing_slicing_and_iteration():
    net = mlp()
    assert isinstance(net[0], nn.Linear) and net[-1] is net[2] and len(net) == 3
    tail = net[1:]
    assert isinstance(tail, nn.Sequential) and len(tail) == 2 and tail[1] is net[2]
    assert [type(m).__name__ for m in net] == ["Linear", "ReLU", "Linear"]
    with pytest.raises(IndexError, match="index 3 is out of range: it holds 3"):
        net[3]
    net.append(nn.Sigmoid())
    assert len(net) == 4 and [n for n, _ in net.named_children()][-1] == "3"


def test_module_list_and_dict_register_parameters():
    layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
    layers.append(nn.Linear(2, 1))
    assert len(list(layers.parameters())) == 6 and isinstance(layers[-1], nn.Linear)
    heads = nn.ModuleDict({"a": nn.Linear(2, 1)})
    heads["b"] = nn.Linear(2, 3)
    assert list(heads) == ["a", "b"] and "b" in heads
    assert [n for n, _ in heads.named_parameters()] == ["a.weight", "a.bias", "b.weight", "b.bias"]
    with pytest.raises(KeyError, match="no module 'c'; it has: a, b"):
        heads["c"]


# --- layers -----------------------------------------------------------------------------------------
def test_linear_default_init_is_uniform_in_one_over_sqrt_fan_in():
    layer = nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)
    for p in (layer.weight, layer.bias):
        values = p.numpy()
        assert values.min() >= -bound and values.max() <= bound
    # a uniform distribution on [-b, b] has std b / sqrt(3)
    assert layer.weight.numpy().std() == pytest.approx(bound / np.sqrt(3), rel=0.02)


def test_conv2d_default_init_uses_channels_times_kernel_as_fan_in():
    conv = nn.Conv2d(3, 16, 5)
    bound = 1 / np.sqrt(3 * 5 * 5)
    assert conv.weight.shape == (16, 3, 5, 5)
    assert np.abs(conv.weight.numpy()).max() <= bound and np.abs(conv.bias.numpy()).max() <= bound
    assert conv(dt.ones(2, 3, 8, 8)).shape == (2, 16, 4, 4)
    assert nn.Conv2d(1, 2, 3, padding=1)(dt.ones(1, 1, 5, 5)).shape == (1, 2, 5, 5)


def test_embedding_from_pretrained_is_frozen_and_padding_row_is_zero():
    vectors = np.arange(12, dtype=np.float32).reshape(4, 3)
    table = nn.Embedding.from_pretrained(vectors)
    assert not table.weight.requires_grad
    np.testing.assert_array_equal(table(dt.tensor([3])).numpy(), vectors[[3]])
    assert nn.Embedding.from_pretrained(vectors, freeze=False).weight.requires_grad
    pad = nn.Embedding(5, 2, padding_idx=-1)
    assert pad.padding_idx == 4 and pad.weight[4].tolist() == [0.0, 0.0]


def batch(seed=0):
    return dt.tensor(np.random.default_rng(seed).normal(3.0, 2.0, (16, 2)).astype(np.float32))


def test_batchnorm_follows_train_and_eval_by_default():
    bn = nn.BatchNorm1d(2)
    x = batch()
    out = bn(x)
    np.testing.assert_allclose(out.numpy().mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * x.numpy().mean(0), rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * x.numpy().var(0, ddof=1),
                               rtol=1e-5)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    frozen = bn.running_mean.numpy().copy()
    expected = (x.numpy() - frozen) / np.sqrt(bn.running_var.numpy() + 1e-5)
    np.testing.assert_allclose(bn(x).numpy(), expected, rtol=1e-5)
    np.testing.assert_array_equal(bn.running_mean.numpy(), frozen)


def test_batchnorm_use_global_stats_true_keeps_running_stats_fixed_in_train_mode():
    bn = nn.BatchNorm1d(2, use_global_stats=True)
    bn.running_mean.data[...] = [1.0, 2.0]
    bn.running_var.data[...] = [4.0, 9.0]
    bn.train()
    x = batch()
    out = bn(x)
    np.testing.assert_array_equal(bn.running_mean.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(bn.running_var.numpy(), [4.0, 9.0])
    np.testing.assert_allclose(out.numpy(), (x.numpy() - [1, 2]) / np.sqrt(np.array([4, 9]) + 1e-5),
                               rtol=1e-5)
    out.sum().backward()
    assert bn.weight.grad is not None  # the affine part still learns


def test_batchnorm_use_global_stats_false_uses_batch_stats_even_in_eval():
    bn = nn.BatchNorm1d(2, use_global_stats=False).eval()
    out = bn(batch())
    np.testing.assert_allclose(out.numpy().mean(0), 0, atol=1e-5)
    np.testing.assert_array_equal(bn.running_mean.numpy(), [0.0, 0.0])  # eval: no update


def test_batchnorm2d_and_its_state_dict():
    bn = nn.BatchNorm2d(3)
    assert bn(dt.randn(4, 3, 5, 5)).shape == (4, 3, 5, 5)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]
    with pytest.raises(ValueError, match=r"BatchNorm2d\(3\) expects input of rank 4 with 3 "):
        bn(dt.randn(4, 3))


def test_dropout_layer_is_off_in_eval():
    drop = nn.Dropout(0.5)
    x = dt.ones(100)
    assert (drop(x).numpy() == 0).any()
    drop.eval()
    assert drop(x) is x


def test_layer_norm_and_activations():
    y = nn.LayerNorm(4)(dt.randn(3, 4))
    np.testing.assert_allclose(y.numpy().mean(1), 0, atol=1e-5)
    x = dt.tensor([-2.0, 0.5])
    assert nn.ReLU()(x).tolist() == [0.0, 0.5]
    assert nn.LeakyReLU(0.1)(x).tolist() == pytest.approx([-0.2, 0.5])
    assert nn.Tanh()(x).tolist() == pytest.approx(np.tanh([-2.0, 0.5]).tolist())
    assert nn.Sigmoid()(x).tolist() == pytest.approx((1 / (1 + np.exp([2.0, -0.5]))).tolist())
    assert nn.Identity()(x) is x
    assert nn.Flatten()(dt.ones(2, 3, 4)).shape == (2, 12)
    assert nn.GlobalAvgPool2d()(dt.ones(2, 3, 4, 4)).shape == (2, 3)
    assert nn.MaxPool2d(2)(dt.ones(1, 1, 4, 4)).shape == (1, 1, 2, 2)
    np.testing.assert_allclose(nn.Softmax(1)(dt.zeros(2, 4)).numpy(), 0.25)


def test_lenet_forward_and_backward():
    net = nn.Sequential(
        nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(16 * 4 * 4, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    loss = F.cross_entropy(net(dt.randn(2, 1, 28, 28)), dt.tensor([3, 7]))
    loss.backward()
    assert all(p.grad is not None and p.grad.shape == p.shape for p in net.parameters())


def test_tied_aliases_with_different_values_in_the_state_dict_are_an_error():
    # PyTorch would copy both keys into the one parameter and keep the last; that hides a
    # broken file, so dltutor names the aliases and changes nothing.
    net, shared = tied_net()
    before = snapshot(net)
    state = net.state_dict()
    state["4.weight"] = state["4.weight"] + 1.0
    with pytest.raises(nn.StateDictError, match=r"'2.weight' and '4.weight'.*overwrite"):
        net.load_state_dict(state)
    after = snapshot(net)
    for key in before:
        np.testing.assert_array_equal(before[key], after[key])
    state["4.weight"] = state["2.weight"]             # equal values load, and the tie stays
    net.load_state_dict(state)
    assert net[2].weight is net[4].weight


def test_functional_flatten_and_nn_utils_clipping_at_pytorchs_paths():
    assert F.flatten(dt.zeros(2, 3, 4), 1).shape == (2, 12)
    w = nn.Parameter([0.0, 0.0])
    w.grad = dt.tensor([3.0, 4.0])
    total = nn.utils.clip_grad_norm_([w], max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(w.grad.numpy(), np.array([3.0, 4.0]) * 1.0 / (5.0 + 1e-6),
                               rtol=1e-6)
    nn.utils.clip_grad_value_([w], 0.5)
    assert float(w.grad.abs().max()) <= 0.5

