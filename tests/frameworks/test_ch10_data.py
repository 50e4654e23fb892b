"""Chapter 10 (data, checkpoints): what it says PyTorch 2.13 and Paddle 3.3 do, run in them.

Every file goes into pytest's ``tmp_path``. MegEngine's claims (``mge-...``) are cited from its
source in notebooks/SOURCES.md.
"""
from __future__ import annotations

import collections
import inspect
import io
import os
import pickle
import zipfile

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler, TensorDataset

from chapters import paddle_dynamic
from claims import claim, row


class PidDataset(Dataset):
    """Sample i is [pid of the process that read it, i]; it also notes what it read."""

    def __init__(self, size=4):
        self.read, self.size = [], size

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        self.read.append(i)
        return torch.tensor([os.getpid(), i])


class Surprise:
    """A pickled object that runs code when it is loaded: it prints a line."""

    def __reduce__(self):
        return (print, ("run by the unpickler",))


# -- the loader --------------------------------------------------------------------------------
@claim("torch-data-loader-shape")
@row("torch-names-10", "data set of arrays", "`torch.utils.data.TensorDataset`")
def test_dataset_and_loader_shape():
    X, y = torch.randn(10, 2), torch.arange(10)
    ds = TensorDataset(X, y)
    assert len(ds) == 10 and isinstance(ds[3], tuple) and torch.equal(ds[3][0], X[3])
    params = inspect.signature(DataLoader).parameters
    for name in ("dataset", "batch_size", "shuffle", "num_workers", "drop_last", "generator"):
        assert name in params, name
    batches = list(DataLoader(ds, batch_size=4))
    assert [tuple(xb.shape) for xb, _ in batches] == [(4, 2), (4, 2), (2, 2)]
    assert issubclass(TensorDataset, Dataset)


@claim("torch-dataloader-drop-last-not-bool")
def test_drop_last_string_is_refused():
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        DataLoader(TensorDataset(torch.arange(10)), batch_size=4, drop_last="False")


@claim("torch-dataloader-shuffle-truth-value")
def test_shuffle_string_false_shuffles():
    loader = DataLoader(TensorDataset(torch.arange(10)), batch_size=10, shuffle="False")
    (order,), = list(loader)
    assert sorted(order.tolist()) == list(range(10))
    assert order.tolist() != list(range(10)), "shuffle='False' is truthy: the order is shuffled"


@claim("paddle-dataloader-bool-flags")
def test_paddle_refuses_string_flags(paddle):
    ds = paddle.io.TensorDataset([paddle.arange(10)])
    for flag in ("shuffle", "drop_last"):
        with pytest.raises(AssertionError, match=f"{flag} should be a boolean value"):
            paddle.io.DataLoader(ds, batch_size=4, **{flag: "False"})


@claim("torch-dataloader-generator-order")
def test_generator_makes_the_order_reproducible():
    ds = TensorDataset(torch.arange(10))

    def order(seed):
        g = torch.Generator().manual_seed(seed)
        return [b.tolist() for (b,) in DataLoader(ds, batch_size=4, shuffle=True, generator=g)]

    assert order(3) == order(3) and order(3) != order(4)


@claim("torch-dataloader-workers-processes")
def test_torch_workers_are_processes_with_shared_memory_batches():
    ds = PidDataset()
    batches = list(DataLoader(ds, batch_size=2, num_workers=1))
    pids = {int(b[0, 0]) for b in batches}
    assert len(pids) == 1 and os.getpid() not in pids, "read in another process"
    assert all(b.is_shared() for b in batches), "the batch arrives in shared memory"
    assert ds.read == [], "the worker read its own copy of the dataset"
    assert not next(iter(DataLoader(ds, batch_size=2))).is_shared()   # num_workers=0: no


@claim("paddle-dataloader-workers-processes")
def test_paddle_workers_are_processes_with_shared_memory_default(paddle):
    class PaddlePid(paddle.io.Dataset):
        def __init__(self):
            self.read = []

        def __len__(self):
            return 4

        def __getitem__(self, i):
            self.read.append(i)
            return np.array([os.getpid(), i], dtype="int64")

    assert inspect.signature(paddle.io.DataLoader).parameters["use_shared_memory"].default is True
    ds = PaddlePid()
    batches = list(paddle.io.DataLoader(ds, batch_size=2, num_workers=1))
    pids = {int(b.numpy()[0, 0]) for b in batches}
    assert len(pids) == 1 and os.getpid() not in pids
    assert ds.read == []


@claim("torch-distributed-sampler-set-epoch")
@row("torch-names-10", "shuffle order of a given epoch", "`DistributedSampler.set_epoch(e)`")
def test_distributed_sampler_set_epoch():
    ds = TensorDataset(torch.arange(10))
    sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=True, seed=0)

    def order(epoch):
        sampler.set_epoch(epoch)
        return list(sampler)

    assert order(1) == order(1) and order(1) != order(2)
    assert sorted(order(2)) == list(range(10))


@claim("paddle-distributed-batch-sampler-set-epoch")
@row("paddle-names-10", "shuffle order of a given epoch",
     "`DistributedBatchSampler.set_epoch(e)`")
def test_paddle_distributed_batch_sampler_set_epoch(paddle):
    ds = paddle.io.TensorDataset([paddle.arange(10)])
    sampler = paddle.io.DistributedBatchSampler(ds, batch_size=4, num_replicas=1, rank=0,
                                                shuffle=True)

    def order(epoch):
        sampler.set_epoch(epoch)
        return list(sampler)

    assert order(1) == order(1) and order(1) != order(2)
    assert sorted(i for batch in order(2) for i in batch) == list(range(10))


@claim("torch-set-num-threads")
def test_set_num_threads():
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


# -- saving and loading ------------------------------------------------------------------------
@claim("torch-save-tensor-list-dict")
@row("torch-names-10", "save one tensor, a list, a dict", "`torch.save(x, path)`")
def test_torch_save_takes_a_tensor_a_list_a_dict(tmp_path):
    x, y = torch.arange(4), torch.zeros(4)
    for obj, kind in ((x, torch.Tensor), ([x, y], list), ((x, y), tuple), ({"x": x, "y": y}, dict)):
        path = tmp_path / "f"
        torch.save(obj, path)
        back = torch.load(path)
        assert type(back) is kind or isinstance(back, kind)
    assert torch.load(path)["x"].tolist() == [0, 1, 2, 3] and torch.load(path)["x"].dtype == torch.int64


@claim("torch-load-weights-only-map-location")
def test_torch_load_keywords(tmp_path):
    params = inspect.signature(torch.load).parameters
    assert "weights_only" in params and "map_location" in params
    path = tmp_path / "f"
    torch.save([torch.arange(4)], path)
    (back,) = torch.load(path, weights_only=True, map_location="cpu")
    assert back.device == torch.device("cpu") and back.tolist() == [0, 1, 2, 3]


@claim("torch-save-zip-pickle")
def test_torch_save_is_a_zip_holding_a_pickle(tmp_path, capsys):
    path = tmp_path / "f.pt"
    torch.save({"w": torch.arange(3)}, path)
    names = zipfile.ZipFile(path).namelist()
    assert any(n.endswith("/data.pkl") for n in names)
    torch.save({"w": Surprise()}, path)
    capsys.readouterr()
    torch.load(path, weights_only=False)
    assert capsys.readouterr().out == "run by the unpickler\n", "loading a pickle runs code"


PLAIN_VALUES = {"tensor": torch.arange(3), "list": [torch.ones(2), 1.5],
                "tuple": (torch.zeros(1), "x"), "dict": {"a": torch.ones(1), "n": 3, "f": None},
                "OrderedDict": collections.OrderedDict(w=torch.ones(1))}


@claim("torch-load-weights-only-default")
@pytest.mark.parametrize("kind", sorted(PLAIN_VALUES))
def test_torch_load_defaults_to_weights_only(tmp_path, capsys, kind):
    """Tensors, containers and plain values load by default; any other object is refused."""
    path = tmp_path / "f.pt"
    torch.save(PLAIN_VALUES[kind], path)
    back = torch.load(path)                                   # no weights_only given
    assert type(back) is type(PLAIN_VALUES[kind]) and repr(back) == repr(PLAIN_VALUES[kind])
    torch.save({"w": Surprise()}, path)
    capsys.readouterr()
    with pytest.raises(pickle.UnpicklingError, match="In PyTorch 2.6, we changed the default value "
                                                     "of the `weights_only` argument"):
        torch.load(path)                                      # no weights_only given
    assert capsys.readouterr().out == "", "refused before anything ran"


@claim("paddle-save-load-pickle")
def test_paddle_save_is_a_pickle_and_load_runs_it(paddle, tmp_path, capsys):
    path = str(tmp_path / "m.pdparams")
    paddle.save({"w": paddle.arange(3)}, path)
    with open(path, "rb") as f:
        assert f.read(1) == b"\x80"                           # a pickle's first byte
    with open(path, "rb") as f:
        assert "w" in pickle.load(f)                          # plain pickle reads it
    paddle.save({"w": Surprise()}, path)
    capsys.readouterr()
    paddle.load(path)
    assert capsys.readouterr().out == "run by the unpickler\n", "loading a pickle runs code"


@claim("paddle-load-no-map-location")
def test_paddle_load_has_no_map_location(paddle, tmp_path):
    path = str(tmp_path / "x.pdtensor")
    paddle.save(paddle.arange(3), path)
    with pytest.raises(ValueError, match=r"map_location\) of `paddle.load` is not supported"):
        paddle.load(path, map_location="cpu")
    assert callable(paddle.load(path).cuda)                  # move it yourself afterwards


def _nested(depth):
    nested = leaf = {}
    for _ in range(depth):
        leaf["x"] = {}
        leaf = leaf["x"]
    leaf["w"] = torch.zeros(2)
    return nested


@claim("torch-save-nesting-limit")
def test_torch_save_nesting_limit():
    import sys
    assert sys.getrecursionlimit() == 1000                    # Python's default
    torch.save(_nested(450), io.BytesIO())                    # 4.5 x dt.save's 100 levels
    with pytest.raises(RecursionError):
        torch.save(_nested(550), io.BytesIO())


# ---------------------------------------------------------------- a pretrained backbone (recipe)


def _torch_classifier(classes):
    torch.manual_seed(classes)
    return torch.nn.ModuleDict({"features": torch.nn.Sequential(torch.nn.Linear(4, 8),
                                                                torch.nn.ReLU()),
                                "head": torch.nn.Linear(8, classes)})


@claim("torch-strict-false-still-refuses-shapes")
@row("torch-names-10", "load only what fits (a new head)",
     "`model.load_state_dict(sd, strict=False)`")
def test_torch_strict_false_forgives_keys_not_shapes():
    pretrained, new = _torch_classifier(10), _torch_classifier(3)
    with pytest.raises(RuntimeError, match="size mismatch for head.weight"):
        new.load_state_dict(pretrained.state_dict(), strict=False)
    backbone = {k: v for k, v in pretrained.state_dict().items() if not k.startswith("head.")}
    result = new.load_state_dict(backbone, strict=False)
    assert result.missing_keys == ["head.weight", "head.bias"] and result.unexpected_keys == []
    assert torch.equal(new["features"][0].weight, pretrained["features"][0].weight)


@claim("torch-strict-false-loads-nothing-under-other-names")
def test_torch_strict_false_under_other_names_loads_nothing_and_says_so():
    pretrained, new = _torch_classifier(10), _torch_classifier(3)
    before = new["features"][0].weight.detach().clone()
    renamed = {k.replace("features.", "body.", 1): v for k, v in pretrained.state_dict().items()
               if not k.startswith("head.")}
    result = new.load_state_dict(renamed, strict=False)          # no error at all
    assert result.missing_keys == ["features.0.weight", "features.0.bias", "head.weight",
                                   "head.bias"]
    assert result.unexpected_keys == ["body.0.weight", "body.0.bias"]
    assert torch.equal(new["features"][0].weight, before)          # nothing was loaded


@claim("paddle-set-state-dict-skips-shape-mismatch")
def test_paddle_set_state_dict_skips_a_shape_mismatch_with_a_warning():
    paddle = paddle_dynamic()
    paddle.seed(0)
    pretrained, new = paddle.nn.Linear(4, 10), paddle.nn.Linear(4, 3)
    before = new.weight.numpy().copy()
    with pytest.warns(UserWarning, match="Skip loading for weight"):
        missing, unexpected = new.set_state_dict(pretrained.state_dict())
    assert missing == ["weight", "bias"] and unexpected == ["weight", "bias"]
    assert np.array_equal(new.weight.numpy(), before)              # kept its own values
