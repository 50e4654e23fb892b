"""Chapter 10's names table (data, checkpoints), cell by cell, run in PyTorch 2.13 and Paddle 3.3.

Each test proves what one PyTorch or Paddle cell says the code does (``@row``). Paddle's
checkpoint rows are in test_rows_10_11_b.py, chapter 11's table in test_rows_10_11_c.py; cells
already proved in test_ch10_data.py carry their ``@row`` there. Files go into ``tmp_path``.
"""
from __future__ import annotations

import copy
import json
import os
import pickle
import re
import struct
import subprocess
import sys
import unittest.mock
import zipfile

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset

from claims import row
from test_ch10_data import PidDataset, Surprise



class Squares(Dataset):
    """A data set of its own: sample i is (i, i*i)."""

    def __len__(self):
        return 7

    def __getitem__(self, i):
        return torch.tensor(float(i)), torch.tensor(float(i * i))


def Pids():
    """Eight samples, each [pid of the process that read it, i] (test_ch10_data's data set)."""
    return PidDataset(8)


# -- data sets and loaders: PyTorch ------------------------------------------------------------
@row("torch-names-10", "your own data set", "`torch.utils.data.Dataset`")
def test_torch_dataset_subclass_feeds_a_loader():
    with pytest.raises(NotImplementedError):
        Dataset()[0]                                       # the base class holds no data
    batches = list(DataLoader(Squares(), batch_size=3))
    assert [len(xb) for xb, _ in batches] == [3, 3, 1]
    assert batches[1][0].tolist() == [3.0, 4.0, 5.0] and batches[1][1].tolist() == [9.0, 16.0, 25.0]


@row("torch-names-10", "batches, shuffled",
     "`DataLoader(ds, batch_size, shuffle=True, generator=g)`")
def test_torch_loader_shuffles_every_epoch_reproducibly():
    ds = TensorDataset(torch.arange(10))

    def epochs(seed):
        g = torch.Generator().manual_seed(seed)
        loader = DataLoader(ds, 4, shuffle=True, generator=g)      # batch_size by position
        return [[b.tolist() for (b,) in loader] for _ in range(2)]

    first, second = epochs(5)
    assert [len(b) for b in first] == [4, 4, 2]
    assert sorted(sum(first, [])) == list(range(10)) and sum(first, []) != list(range(10))
    assert first != second, "a new order every epoch"
    assert epochs(5) == [first, second] and epochs(6) != [first, second]


@row("torch-names-10", "background loading", "`num_workers=2` (processes)")
def test_torch_two_workers_are_two_other_processes():
    ds = Pids()
    batches = list(DataLoader(ds, batch_size=2, num_workers=2))
    pids = {int(b[0, 0]) for b in batches}
    assert len(pids) == 2 and os.getpid() not in pids, "two worker processes read the data"
    assert [b[:, 1].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert ds.read == [], "each worker read its own copy of the data set"


@row("torch-names-10", "BLAS threads", "`torch.set_num_threads(n)`")
def test_torch_set_num_threads_sets_the_blas_threads():
    before = torch.get_num_threads()
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            info = torch.__config__.parallel_info()
            counts = re.findall(r"(\w+_get_max_threads)\(\) : (\d+)", info)
            assert {name for name, _ in counts} >= {"omp_get_max_threads", "mkl_get_max_threads"}
            assert all(int(c) == n for _, c in counts), info     # OpenMP and MKL (BLAS) follow
    finally:
        torch.set_num_threads(before)


# -- checkpoints: PyTorch ----------------------------------------------------------------------
def _trained(seed=0, steps=3, opt_class=torch.optim.Adam, **kw):
    torch.manual_seed(seed)
    model = torch.nn.Linear(3, 2)
    opt = opt_class(model.parameters(), lr=0.1, **kw)
    for _ in range(steps):
        opt.zero_grad()
        model(torch.ones(4, 3)).pow(2).sum().backward()
        opt.step()
    return model, opt


@row("torch-names-10", "save a checkpoint",
     "`torch.save(...)` (pickle) or `safetensors.torch.save_file`")
def test_torch_save_pickles_and_safetensors_saves_arrays(tmp_path):
    from safetensors.torch import load_file, save_file
    model, opt = _trained()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, tmp_path / "c.pt")
    assert any(n.endswith("/data.pkl") for n in zipfile.ZipFile(tmp_path / "c.pt").namelist())
    back = torch.load(tmp_path / "c.pt")
    assert torch.equal(back["model"]["weight"], model.weight)
    assert back["optimizer"]["state"][0]["step"] == 3
    save_file(model.state_dict(), tmp_path / "m.safetensors")
    raw = (tmp_path / "m.safetensors").read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])                         # a JSON header, then bytes
    assert set(json.loads(raw[8:8 + size])) >= {"weight", "bias"} and raw[:1] != b"\x80"
    assert torch.equal(load_file(tmp_path / "m.safetensors")["weight"], model.weight)
    with pytest.raises(ValueError, match="expected torch.Tensor"):
        save_file({"step": 3}, tmp_path / "s.safetensors")       # arrays only, no objects


PLAIN = [torch.arange(3), [torch.ones(2), 1.5], (torch.zeros(1), "x"), {"a": torch.ones(1),
         "n": 3, "f": None, "b": True}]


@row("torch-names-10", "load it", "`torch.load(path, weights_only=True)`")
@pytest.mark.parametrize("obj", PLAIN, ids=["tensor", "list", "tuple", "dict"])
def test_torch_load_weights_only_rebuilds_plain_data_and_refuses_objects(obj, tmp_path, capsys):
    torch.save(obj, tmp_path / "f.pt")
    back = torch.load(tmp_path / "f.pt", weights_only=True)
    assert type(back) is type(obj) and repr(back) == repr(obj)
    torch.save({"w": Surprise()}, tmp_path / "bad.pt")
    capsys.readouterr()
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(tmp_path / "bad.pt", weights_only=True)
    assert capsys.readouterr().out == "", "refused before anything ran"


@row("torch-names-10", "load onto a device", '`torch.load(path, map_location="cpu")`')
def test_torch_map_location_puts_a_gpu_checkpoint_on_the_cpu(tmp_path):
    """A file written on a GPU tags each storage "cuda:0". Without a GPU we write such a file
    by letting torch.serialization's own tagger answer "cuda:0", then load it as a CPU-only
    machine would: refused without map_location, on the CPU with it."""
    with unittest.mock.patch.object(torch.serialization, "location_tag", lambda s: "cuda:0"):
        torch.save({"w": torch.arange(3.0)}, tmp_path / "gpu.pt")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA"):
            torch.load(tmp_path / "gpu.pt")
    back = torch.load(tmp_path / "gpu.pt", map_location="cpu")
    assert back["w"].device == torch.device("cpu") and back["w"].tolist() == [0.0, 1.0, 2.0]
    assert torch.load(tmp_path / "gpu.pt", map_location="meta")["w"].device.type == "meta"


@row("torch-names-10", "restore weights", "`model.load_state_dict(sd)`")
def test_torch_load_state_dict_copies_the_weights_in_place():
    trained, _ = _trained()
    fresh = torch.nn.Linear(3, 2)
    weight = fresh.weight
    result = fresh.load_state_dict(trained.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert fresh.weight is weight and torch.equal(fresh.weight, trained.weight)
    x = torch.randn(5, 3)
    assert torch.equal(fresh(x), trained(x))
    with pytest.raises(RuntimeError, match='Missing key.*"bias"'):
        fresh.load_state_dict({"weight": trained.weight})             # strict by default


OPTIMIZERS = [(torch.optim.SGD, {"momentum": 0.9}), (torch.optim.Adam, {}),
              (torch.optim.AdamW, {}), (torch.optim.RMSprop, {})]


@row("torch-names-10", "restore optimizer", "`opt.load_state_dict(sd)`")
@pytest.mark.parametrize("opt_class, kw", OPTIMIZERS, ids=lambda v: getattr(v, "__name__", ""))
def test_torch_optimizer_load_state_dict_resumes_exactly(opt_class, kw):
    def step(model, opt):
        opt.zero_grad()
        model(torch.ones(4, 3)).pow(2).sum().backward()
        opt.step()
        return model.weight.detach().clone()

    model, opt = _trained(opt_class=opt_class, **kw)
    saved_model, saved_opt = copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict())
    expected = step(model, opt)
    for restore in (True, False):
        new_model, new_opt = _trained(seed=1, steps=0, opt_class=opt_class, **kw)
        new_model.load_state_dict(saved_model)
        if restore:
            new_opt.load_state_dict(saved_opt)
        assert torch.equal(step(new_model, new_opt), expected) is restore


@row("torch-names-10", "restore schedule", "`sched.load_state_dict(sd)`")
def test_torch_scheduler_load_state_dict_resumes_the_schedule():
    def lrs(sched, opt, n=4):
        out = []
        for _ in range(n):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr()[0])
        return out

    def fresh():
        opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.8)
        return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    opt, sched = fresh()
    lrs(sched, opt, 3)
    saved_opt, saved_sched = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
    expected = lrs(sched, opt)
    for restore in (True, False):
        opt2, sched2 = fresh()
        opt2.load_state_dict(saved_opt)
        if restore:
            sched2.load_state_dict(saved_sched)
            assert sched2.last_epoch == 3
        assert (lrs(sched2, opt2) == expected) is restore


# -- data sets and loaders: Paddle -------------------------------------------------------------
@row("paddle-names-10", "data set of arrays", "`paddle.io.TensorDataset`")
def test_paddle_tensor_dataset_indexes_every_array(paddle):
    X, y = paddle.randn([10, 2]), paddle.arange(10)
    ds = paddle.io.TensorDataset([X, y])
    assert len(ds) == 10 and isinstance(ds, paddle.io.Dataset)
    x3, y3 = ds[3]
    assert np.array_equal(x3.numpy(), X.numpy()[3]) and int(y3) == 3


def _paddle_squares(paddle):
    class PaddleSquares(paddle.io.Dataset):
        def __len__(self):
            return 7

        def __getitem__(self, i):
            return np.float32(i), np.float32(i * i)

    return PaddleSquares()


@row("paddle-names-10", "your own data set", "`paddle.io.Dataset`")
def test_paddle_dataset_subclass_feeds_a_loader(paddle):
    with pytest.raises(NotImplementedError):
        paddle.io.Dataset()[0]                              # the base class holds no data
    batches = list(paddle.io.DataLoader(_paddle_squares(paddle), batch_size=3))
    assert [len(xb) for xb, _ in batches] == [3, 3, 1]
    assert batches[1][0].tolist() == [3.0, 4.0, 5.0] and batches[1][1].tolist() == [9, 16, 25]


@row("paddle-names-10", "batches, shuffled",
     "`paddle.io.DataLoader(ds, batch_size=batch_size, shuffle=True)`")
def test_paddle_loader_shuffles_with_batch_size_by_keyword(paddle):
    """Proposed cell: the table's `paddle.io.DataLoader(ds, batch_size, shuffle=True)` passes
    the batch size second, where Paddle's DataLoader takes ``feed_list``: it fails."""
    ds = paddle.io.TensorDataset([paddle.arange(10)])
    assert list(paddle.io.DataLoader.__init__.__code__.co_varnames[1:3]) == ["dataset",
                                                                              "feed_list"]
    with pytest.raises(TypeError, match="'int' object is not iterable"):
        list(paddle.io.DataLoader(ds, 4, shuffle=True))
    loader = paddle.io.DataLoader(ds, batch_size=4, shuffle=True)
    first = [b.tolist() for (b,) in loader]
    second = [b.tolist() for (b,) in loader]
    assert [len(b) for b in first] == [4, 4, 2]
    assert sorted(sum(first, [])) == list(range(10)) and sum(first, []) != list(range(10))
    assert first != second, "a new order every epoch"


@row("paddle-names-10", "background loading", "`num_workers=2` (processes)")
def test_paddle_two_workers_are_two_other_processes(paddle):
    class PaddlePids(paddle.io.Dataset):
        def __init__(self):
            self.read = []

        def __len__(self):
            return 8

        def __getitem__(self, i):
            self.read.append(i)
            return np.array([os.getpid(), i], dtype="int64")

    ds = PaddlePids()
    batches = [b.numpy() for b in paddle.io.DataLoader(ds, batch_size=2, num_workers=2)]
    pids = {int(b[0, 0]) for b in batches}
    assert len(pids) == 2 and os.getpid() not in pids, "two worker processes read the data"
    assert [b[:, 1].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert ds.read == [], "each worker read its own copy of the data set"


PADDLE_THREADS = r'''
import os, paddle, threadpoolctl
x = paddle.randn([256, 256]); (x @ x).numpy()
libs = os.path.dirname(paddle.__file__)
print([i["num_threads"] for i in threadpoolctl.threadpool_info()
       if i["filepath"].startswith(libs) and i["user_api"] == "openmp"])
'''


@row("paddle-names-10", "BLAS threads", "`OMP_NUM_THREADS`")
def test_paddle_blas_threads_follow_omp_num_threads(paddle):
    """Paddle's own OpenMP runtime (libiomp5 in paddle/libs, which its MKL uses) runs as many
    threads as OMP_NUM_THREADS says; Paddle has no call of its own to set them."""
    from absence import spellings_found
    assert spellings_found([paddle, paddle.device, paddle.framework],
                           ["num_threads", "set_threads"]) == []
    for n in (1, 2):
        env = {k: v for k, v in os.environ.items() if k not in ("MKL_NUM_THREADS",)}
        env.update(OMP_NUM_THREADS=str(n), GLOG_minloglevel="2")
        out = subprocess.run([sys.executable, "-c", PADDLE_THREADS], env=env, timeout=120,
                             capture_output=True, text=True, check=True).stdout
        assert out.strip() == f"[{n}]", out
