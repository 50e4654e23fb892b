"""Chapter 10's names table, Paddle's checkpoint rows, run in Paddle 3.3 (see test_rows_10_11.py).

Every file goes into pytest's ``tmp_path``.
"""
from __future__ import annotations

import copy
import inspect
import pickle

import numpy as np
import pytest

from claims import row



def _trained(paddle, seed=0, steps=3, opt_class=None, scheduler=None):
    paddle.seed(seed)
    model = paddle.nn.Linear(3, 2)
    opt_class = opt_class or paddle.optimizer.Adam
    opt = opt_class(learning_rate=scheduler or 0.1, parameters=model.parameters())
    for _ in range(steps):
        _step(paddle, model, opt)
    return model, opt


def _step(paddle, model, opt):
    opt.clear_grad()
    model(paddle.ones([4, 3])).pow(2).sum().backward()
    opt.step()
    return model.weight.numpy().copy()


@row("paddle-names-10", "save a checkpoint", "`paddle.save(state, path)` (pickle)")
def test_paddle_save_writes_the_checkpoint_as_a_pickle(paddle, tmp_path):
    model, opt = _trained(paddle)
    path = str(tmp_path / "c.pdparams")
    paddle.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, path)
    with open(path, "rb") as f:
        assert f.read(1) == b"\x80"                               # a pickle's first byte
    with open(path, "rb") as f:
        raw = pickle.load(f)                                       # plain pickle reads it all
    assert set(raw) == {"model", "optimizer"}
    name, array = raw["model"]["weight"]                           # (name, a NumPy array)
    assert name == model.weight.name and np.array_equal(array, model.weight.numpy())


@row("paddle-names-10", "load it", "`paddle.load(path)`")
def test_paddle_load_gives_the_checkpoint_back(paddle, tmp_path):
    model, opt = _trained(paddle)
    path = str(tmp_path / "c.pdparams")
    paddle.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, path)
    back = paddle.load(path)
    assert isinstance(back["model"]["weight"], paddle.Tensor)
    assert np.array_equal(back["model"]["weight"].numpy(), model.weight.numpy())
    assert set(back["optimizer"]) == set(opt.state_dict())


@row("paddle-names-10", "save one tensor, a list, a dict", "`paddle.save(x, path)`")
@pytest.mark.parametrize("kind", ["tensor", "list", "dict"])
def test_paddle_save_takes_a_tensor_a_list_a_dict(paddle, tmp_path, kind):
    x, y = paddle.arange(4), paddle.zeros([4])
    obj = {"tensor": x, "list": [x, y], "dict": {"x": x, "y": y}}[kind]
    path = str(tmp_path / "f")
    paddle.save(obj, path)
    back = paddle.load(path)
    assert type(back) is type(obj)
    first = {"tensor": lambda o: o, "list": lambda o: o[0], "dict": lambda o: o["x"]}[kind](back)
    assert isinstance(first, paddle.Tensor) and first.tolist() == [0, 1, 2, 3]


@row("paddle-names-10", "load onto a device", "`paddle.load(path)` then `.cuda()`")
def test_paddle_load_then_cuda(paddle, tmp_path):
    """paddle.load has no map_location: the tensors come back on the current device, and
    ``.cuda()`` moves one. Without a GPU (here) ``.cuda()`` exists with its documented
    signature and raises; on a GPU the copy lands there."""
    path = str(tmp_path / "x.pdtensor")
    paddle.save(paddle.arange(3), path)
    with pytest.raises(ValueError, match=r"map_location\) of `paddle.load` is not supported"):
        paddle.load(path, map_location="cpu")
    x = paddle.load(path)
    assert x.place.is_cpu_place() and x.tolist() == [0, 1, 2]
    assert list(inspect.signature(paddle.Tensor.cuda).parameters) == ["self", "device_id",
                                                                      "blocking"]
    if paddle.device.cuda.device_count() == 0:
        with pytest.raises(ValueError, match="No available device found"):
            x.cuda()
    else:
        assert x.cuda().place.is_gpu_place() and x.place.is_cpu_place()


@row("paddle-names-10", "restore weights", "`model.set_state_dict(sd)`")
def test_paddle_set_state_dict_restores_the_weights(paddle):
    trained, _ = _trained(paddle)
    paddle.seed(1)
    fresh = paddle.nn.Linear(3, 2)
    assert not np.array_equal(fresh.weight.numpy(), trained.weight.numpy())
    missing, unexpected = fresh.set_state_dict(trained.state_dict())
    assert missing == [] and unexpected == []
    assert np.array_equal(fresh.weight.numpy(), trained.weight.numpy())
    x = paddle.randn([5, 3])
    assert np.array_equal(fresh(x).numpy(), trained(x).numpy())


def _classifier(paddle, classes):
    paddle.seed(classes)
    return paddle.nn.LayerDict({"features": paddle.nn.Linear(4, 8),
                                "head": paddle.nn.Linear(8, classes)})


@row("paddle-names-10", "load only what fits (a new head)",
     "`model.set_state_dict(sd)` (skips a mismatched shape with a warning)")
def test_paddle_set_state_dict_loads_the_backbone_and_skips_the_new_head(paddle):
    pretrained, new = _classifier(paddle, 10), _classifier(paddle, 3)
    head = new["head"].weight.numpy().copy()
    with pytest.warns(UserWarning, match="Skip loading for head.weight"):
        new.set_state_dict(pretrained.state_dict())
    assert np.array_equal(new["features"].weight.numpy(), pretrained["features"].weight.numpy())
    assert np.array_equal(new["head"].weight.numpy(), head), "the head kept its own values"


@row("paddle-names-10", "restore optimizer", "`opt.set_state_dict(sd)`")
@pytest.mark.parametrize("name", ["Momentum", "Adam", "AdamW", "RMSProp"])
def test_paddle_optimizer_set_state_dict_resumes_exactly(paddle, name, tmp_path):
    opt_class = getattr(paddle.optimizer, name)
    with paddle.utils.unique_name.guard():    # the same names in each run, as in a new program
        model, opt = _trained(paddle, opt_class=opt_class)
    path = str(tmp_path / "c.pdparams")
    paddle.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, path)
    expected = _step(paddle, model, opt)
    for restore in (True, False):
        with paddle.utils.unique_name.guard():
            new_model, new_opt = _trained(paddle, seed=1, steps=0, opt_class=opt_class)
            saved = paddle.load(path)
            new_model.set_state_dict(saved["model"])
            if restore:
                new_opt.set_state_dict(saved["optimizer"])
            assert np.array_equal(_step(paddle, new_model, new_opt), expected) is restore


@row("paddle-names-10", "restore schedule", "`sched.set_state_dict(sd)`")
def test_paddle_scheduler_set_state_dict_resumes_the_schedule(paddle):
    def lrs(sched, n=4):
        out = []
        for _ in range(n):
            sched.step()
            out.append(sched.get_lr())
        return out

    def fresh():
        return paddle.optimizer.lr.StepDecay(0.8, step_size=2, gamma=0.5)

    sched = fresh()
    lrs(sched, 3)
    saved = copy.deepcopy(sched.state_dict())
    expected = lrs(sched)
    for restore in (True, False):
        sched2 = fresh()
        if restore:
            sched2.set_state_dict(saved)
            assert sched2.last_epoch == 3
        assert (lrs(sched2) == expected) is restore
