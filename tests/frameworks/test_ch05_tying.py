"""Chapter 05 (tying parameters): what it says PyTorch 2.13 and Paddle 3.3 do, run in them."""
from __future__ import annotations

import io
import os
import pickle
import re
import zipfile

import numpy as np
import pytest
import torch
from chapters import chapter_cell
from claims import claim, row



def torch_tied(seed=0):
    """The chapter's tied network: one Linear(8, 8) at positions 2 and 4 of a Sequential."""
    torch.manual_seed(seed)
    shared = torch.nn.Linear(8, 8)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), shared, torch.nn.ReLU(),
                               shared, torch.nn.ReLU(), torch.nn.Linear(8, 1))


def torch_untied():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8),
                               torch.nn.ReLU(), torch.nn.Linear(8, 8), torch.nn.ReLU(),
                               torch.nn.Linear(8, 1))


# --- PyTorch --------------------------------------------------------------------------------

@row("torch-names-05", "share a layer", "same")
@claim("torch-tying-same-object-twice")
def test_torch_a_module_used_twice_is_one_object():
    net = torch_tied()
    assert net[2] is net[4] and net[2].weight is net[4].weight
    with torch.no_grad():
        net[2].weight[0, 0] = 100.0
    assert net[4].weight[0, 0].item() == 100.0          # no other copy to change
    assert len(list(net.parameters())) == 6              # nothing special: one object, once


@row("torch-names-05", "gradient of a tied parameter", "same")
@claim("torch-tying-grad-sum")
def test_torch_gradient_of_a_tied_parameter_is_the_sum_over_its_uses():
    tied, untied = torch_tied(), torch_untied()
    untied.load_state_dict(tied.state_dict())
    X, target = torch.randn(16, 4), torch.randn(16, 1)
    for model in (tied, untied):
        torch.nn.functional.mse_loss(model(X), target).backward()
    for name in ("weight", "bias"):
        g2, g4 = getattr(untied[2], name).grad, getattr(untied[4], name).grad
        assert not torch.allclose(g2, g4)                                 # different uses
        assert torch.allclose(getattr(tied[2], name).grad, g2 + g4, atol=1e-6)   # summed


@claim("torch-tying-hook-fires-once")
def test_torch_hook_on_a_tied_parameter_fires_once_with_the_sum():
    tied = torch_tied()
    calls = []
    tied[2].weight.register_hook(lambda grad: calls.append(grad.clone()))
    torch.nn.functional.mse_loss(tied(torch.randn(16, 4)), torch.randn(16, 1)).backward()
    assert len(calls) == 1
    assert torch.equal(calls[0], tied[2].weight.grad)


@row("torch-names-05", "list each parameter once", "`net.parameters()`")
@row("torch-names-05", "list every alias", "`named_parameters(remove_duplicate=False)`")
@claim("torch-tying-named-parameters-once", "torch-tying-state-dict-every-alias")
def test_torch_listing_a_tied_parameter():
    tied = torch_tied()
    assert [n for n, _ in tied.named_parameters()] == ["0.weight", "0.bias", "2.weight",
                                                       "2.bias", "6.weight", "6.bias"]
    assert len(list(tied.parameters())) == 6
    assert [n for n, _ in tied.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias", "6.weight", "6.bias"]
    assert list(tied.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight",
                                       "4.bias", "6.weight", "6.bias"]


@claim("torch-tying-load-disagreeing-aliases-last-module-wins")
def test_torch_loading_two_different_values_for_one_tied_parameter():
    """The review's set-up: one Linear used twice, a state dict whose alias keys differ."""
    saved = {k: v.clone() for k, v in torch_tied(seed=0).state_dict().items()}
    saved["4.weight"] = saved["2.weight"] + 1.0
    fresh = torch_tied(seed=123)
    result = fresh.load_state_dict(saved)                 # no error, no warning
    assert not result.missing_keys and not result.unexpected_keys
    assert fresh[2].weight is fresh[4].weight             # still tied
    assert torch.equal(fresh[2].weight, saved["4.weight"])   # 4.weight, reached last, wins
    assert not torch.equal(fresh[2].weight, saved["2.weight"])
    # the order of the keys in the dict does not matter: the network's order decides
    reordered = {"4.weight": saved["4.weight"], "2.weight": saved["2.weight"],
                 **{k: v for k, v in saved.items() if k not in ("2.weight", "4.weight")}}
    again = torch_tied(seed=7)
    again.load_state_dict(reordered)
    assert torch.equal(again[2].weight, saved["4.weight"])


@row("torch-names-05", "does loading keep the tie?", "yes (`load_state_dict` copies in place)")
@claim("torch-tying-load-keeps-tie")
def test_torch_load_state_dict_copies_in_place_and_keeps_the_tie():
    saved = torch_tied(seed=0).state_dict()
    fresh = torch_tied(seed=123)
    weight = fresh[2].weight
    fresh.load_state_dict(saved)
    assert fresh[2].weight is weight and fresh[4].weight is weight     # the same objects
    assert torch.equal(weight, saved["2.weight"])


@row("torch-names-05", "file",
     "`torch.save`: a zip holding a pickle, the shared storage stored once")
@claim("torch-tying-save-zip-storage-once")
def test_torch_save_is_a_zip_of_a_pickle_and_stores_the_shared_storage_once():
    buffer = io.BytesIO()
    torch.save(torch_tied().state_dict(), buffer)
    names = zipfile.ZipFile(io.BytesIO(buffer.getvalue())).namelist()
    assert any(n.endswith("data.pkl") for n in names)                  # a pickle inside
    storages = [n for n in names if re.search(r"/data/\d+$", n)]
    assert len(storages) == 6                                          # 8 keys, 6 storages
    loaded = torch.load(io.BytesIO(buffer.getvalue()))
    assert loaded["2.weight"].data_ptr() == loaded["4.weight"].data_ptr()


@row("torch-names-05", "share one parameter", "`b.weight = a.weight`")
@claim("torch-tying-assign-weight", "torch-tying-weight-only-two-biases")
def test_torch_tie_one_parameter_by_assignment():
    user, friend = torch.nn.Embedding(5, 3), torch.nn.Embedding(5, 3)
    friend.weight = user.weight
    both = torch.nn.ModuleDict({"user": user, "friend": friend})
    assert friend.weight is user.weight and len(list(both.parameters())) == 1
    left, right = torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)
    right.weight = left.weight                               # the weight only
    assert right.bias is not left.bias
    assert len(list(torch.nn.ModuleDict({"l": left, "r": right}).parameters())) == 3


@claim("torch-tying-embedding-two-columns")
def test_torch_one_embedding_for_two_columns_sums_the_rows():
    table = torch.nn.Embedding(5, 3)
    user_id, friend_id = torch.tensor([0, 1, 2]), torch.tensor([1, 3, 0])
    (table(user_id) * table(friend_id)).sum().backward()
    users = torch.nn.Embedding.from_pretrained(table.weight.detach().clone(), freeze=False)
    friends = torch.nn.Embedding.from_pretrained(table.weight.detach().clone(), freeze=False)
    (users(user_id) * friends(friend_id)).sum().backward()
    assert torch.allclose(table.weight.grad, users.weight.grad + friends.weight.grad, atol=1e-6)
    assert (table.weight.grad[4] == 0).all()


TORCH_OPTIMIZERS = sorted(name for name, cls in vars(torch.optim).items()
                          if isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer)
                          and cls is not torch.optim.Optimizer)
# optimizers that cannot train the chapter's network at all (not a hook question): Muon takes
# 2-D parameters only (the network has biases), SparseAdam sparse gradients only
CANNOT_TRAIN_IT = {"Muon", "SparseAdam"}


@claim("torch-tying-optimizer-step-hooks")
def test_torch_every_optimizer_has_the_base_classs_two_step_hooks():
    """"PyTorch 2.x optimizers have the same two hooks": none overrides Optimizer's."""
    assert len(TORCH_OPTIMIZERS) >= 14
    for name in TORCH_OPTIMIZERS:
        cls = getattr(torch.optim, name)
        for hook in ("register_step_pre_hook", "register_step_post_hook"):
            assert getattr(cls, hook) is getattr(torch.optim.Optimizer, hook), (name, hook)


@claim("torch-tying-optimizer-step-hooks")
@pytest.mark.parametrize("name", [n for n in TORCH_OPTIMIZERS if n not in CANNOT_TRAIN_IT])
def test_torch_the_chapters_norm_trace_runs_unchanged(name):
    """The chapter's NormTrace cell, executed with PyTorch's modules and each optimizer."""
    namespace = {}
    exec(chapter_cell("05_tying", "class NormTrace:"), namespace)
    torch.manual_seed(0)
    hidden = torch.nn.Linear(16, 16)
    net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), hidden, torch.nn.Tanh(),
                              hidden, torch.nn.Tanh(), torch.nn.Linear(16, 2))
    extra = {"momentum": 0.9} if name == "SGD" else {}
    opt = getattr(torch.optim, name)(net.parameters(), lr=0.3, **extra)
    trace = namespace["NormTrace"](net, opt)
    xb, yb = torch.randn(32, 2), torch.randint(0, 2, (32,))

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(xb), yb)
        loss.backward()
        return loss

    before, grads = [], []
    for _ in range(3):
        closure()
        before.append([p.detach().clone() for p in net.parameters()])
        grads.append([p.grad.norm().item() for p in net.parameters()])
        opt.step(closure)              # LBFGS needs it; the others call it, nothing changes
    assert [n for n, _ in trace.named] == ["0.weight", "0.bias", "2.weight", "2.bias",
                                           "6.weight", "6.bias"]      # the shared one once
    assert np.allclose(trace.grad_norm, grads)
    last_update = [(p.detach() - old).norm().item()
                   for p, old in zip(net.parameters(), before[-1])]
    assert max(last_update) > 0
    assert np.allclose(trace.update_norm[-1], last_update) and len(trace.update_norm) == 3


# --- Paddle 3.3 -----------------------------------------------------------------------------

def paddle_tied(paddle, seed=0):
    paddle.seed(seed)
    shared = paddle.nn.Linear(8, 8)
    return paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), shared,
                                paddle.nn.ReLU(), shared, paddle.nn.ReLU(), paddle.nn.Linear(8, 1))


@row("paddle-names-05", "gradient of a tied parameter", "same")
@claim("paddle-tying-grad-sum")
def test_paddle_shared_layer_gradient_is_the_sum(paddle):
    tied = paddle_tied(paddle)
    untied = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 8),
                                  paddle.nn.ReLU(), paddle.nn.Linear(8, 8), paddle.nn.ReLU(),
                                  paddle.nn.Linear(8, 1))
    untied.set_state_dict(tied.state_dict())
    X, target = paddle.randn([16, 4]), paddle.randn([16, 1])
    for model in (tied, untied):
        paddle.nn.functional.mse_loss(model(X), target).backward()
    summed = untied[2].weight.grad.numpy() + untied[4].weight.grad.numpy()
    assert not np.allclose(untied[2].weight.grad.numpy(), untied[4].weight.grad.numpy())
    assert np.allclose(tied[2].weight.grad.numpy(), summed, atol=1e-6)


@claim("paddle-tying-embedding-two-columns")
def test_paddle_one_embedding_for_two_columns(paddle):
    table = paddle.nn.Embedding(5, 3)
    user_id, friend_id = paddle.to_tensor([0, 1, 2]), paddle.to_tensor([1, 3, 0])
    (table(user_id) * table(friend_id)).sum().backward()
    grad = table.weight.grad.numpy()
    w = table.weight.numpy()
    expected = np.zeros_like(w)               # d/dW of sum_i <W[u_i], W[f_i]>
    for u, f in zip([0, 1, 2], [1, 3, 0]):
        expected[u] += w[f]
        expected[f] += w[u]
    assert len(table.parameters()) == 1
    assert np.allclose(grad, expected, atol=1e-6) and (grad[4] == 0).all()


@row("paddle-names-05", "share one parameter",
     "same object, or `ParamAttr(name=...)` in static graphs")
@claim("paddle-tying-assign-weight")
def test_paddle_tie_two_existing_layers_by_assignment(paddle):
    user, friend = paddle.nn.Embedding(5, 3), paddle.nn.Embedding(5, 3)
    friend.weight = user.weight
    both = paddle.nn.LayerDict({"user": user, "friend": friend})
    assert friend.weight is user.weight and len(both.parameters()) == 1


@claim("paddle-tying-dynamic-default", "paddle-tying-dynamic-same-name-valueerror")
def test_paddle_dynamic_graph_a_repeated_parameter_name_is_refused(paddle):
    assert paddle.in_dynamic_mode()                       # the default on import
    paddle.nn.Embedding(5, 3, weight_attr=paddle.ParamAttr(name="ch05_shared_emb"))
    with pytest.raises(ValueError) as err:
        paddle.nn.Embedding(5, 3, weight_attr=paddle.ParamAttr(name="ch05_shared_emb"))
    assert "parameter name [ch05_shared_emb] have be been used" in str(err.value)
    assert "In dygraph mode, the name of parameter can't be same" in str(err.value)


@row("paddle-names-05", "share one parameter",
     "same object, or `ParamAttr(name=...)` in static graphs")
@claim("paddle-tying-static-paramattr-name-shares")
def test_paddle_static_graph_one_name_is_one_parameter(paddle):
    """Two static embedding lookups with ParamAttr(name="shared_emb") read one table.
    paddle.static.nn.embedding is a legacy-program layer: Paddle 3.3 runs it under
    OldIrGuard (its new default IR, PIR, rejects it)."""
    paddle.enable_static()
    try:
        with paddle.pir_utils.OldIrGuard():
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                users = paddle.static.data("user_id", [3], "int64")
                friends = paddle.static.data("friend_id", [3], "int64")
                attr = paddle.ParamAttr(name="shared_emb")
                u = paddle.static.nn.embedding(users, size=[5, 3], param_attr=attr)
                f = paddle.static.nn.embedding(friends, size=[5, 3], param_attr=attr)
                x = paddle.static.data("x", [2, 4], "float32")
                fc_attr = paddle.ParamAttr(name="shared_fc_w")
                paddle.static.nn.fc(x, 3, weight_attr=fc_attr)
                paddle.static.nn.fc(x, 3, weight_attr=fc_attr)
            names = sorted(p.name for p in main.all_parameters())
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(startup)
            u_out, f_out, table = exe.run(
                main, feed={"user_id": np.array([0, 1, 2]), "friend_id": np.array([1, 3, 0]),
                            "x": np.ones((2, 4), "float32")},
                fetch_list=[u, f, "shared_emb"])
    finally:
        paddle.disable_static()
    assert names.count("shared_emb") == 1 and names.count("shared_fc_w") == 1
    assert len(names) == 4          # one table, one fc weight, and TWO fc biases (not named)
    assert np.array_equal(u_out, table[[0, 1, 2]]) and np.array_equal(f_out, table[[1, 3, 0]])


@row("paddle-names-05", "list each parameter once", "`net.parameters()`")
@row("paddle-names-05", "list every alias", "`named_parameters(remove_duplicate=False)`")
@claim("paddle-tying-named-parameters-remove-duplicate")
def test_paddle_named_parameters_lists_aliases_on_request(paddle):
    tied = paddle_tied(paddle)
    assert [n for n, _ in tied.named_parameters()] == ["0.weight", "0.bias", "2.weight",
                                                       "2.bias", "6.weight", "6.bias"]
    assert len(tied.parameters()) == 6
    assert [n for n, _ in tied.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias", "6.weight", "6.bias"]


@row("paddle-names-05", "does loading keep the tie?", "yes (`set_state_dict` copies in place)")
@claim("paddle-tying-set-state-dict-keeps-tie")
def test_paddle_set_state_dict_copies_in_place(paddle):
    saved = {k: v.numpy().copy() for k, v in paddle_tied(paddle, seed=0).state_dict().items()}
    fresh = paddle_tied(paddle, seed=123)
    weight = fresh[2].weight
    fresh.set_state_dict(saved)
    assert fresh[2].weight is weight and fresh[4].weight is weight
    assert np.array_equal(weight.numpy(), saved["2.weight"])


@row("paddle-names-05", "file", "`paddle.save`: pickle")
@claim("paddle-tying-save-pickle")
def test_paddle_save_writes_a_pickle(paddle, tmp_path):
    path = os.fspath(tmp_path / "tied.pdparams")
    paddle.save(paddle_tied(paddle).state_dict(), path)
    with open(path, "rb") as file:
        content = pickle.load(file)                     # a plain pickle of NumPy arrays
    assert isinstance(content["2.weight"], np.ndarray) and "4.weight" in content
