"""Issue 46, item 4: ``dt.load`` reads the header, then only the tensors, out of a memory map.

The hostile files (a FIFO, /dev/zero, a link to a device, a small file whose header claims
2 GiB) are in tests/io/test_bad_input.py; here are the loads that must keep working, and the
memory they take.
"""
from __future__ import annotations

import json
import os
import struct
import tracemalloc

import numpy as np
import pytest
from safetensors import SafetensorError, safe_open

import dltutor as dt
from dltutor import nn, optim
from dltutor.io.files import _open_regular_file, _reopenable


def trained(seed):
    dt.manual_seed(seed)
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    opt = optim.Adam(net.parameters(), lr=0.01)
    for _ in range(3):
        opt.zero_grad()
        net(dt.randn(5, 3)).pow(2).mean().backward()
        opt.step()
    return net, opt


def test_a_model_and_its_optimizer_round_trip_and_train_on_identically(tmp_path):
    net, opt = trained(0)
    path = tmp_path / "checkpoint.safetensors"
    dt.save({"model": net.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}, path)
    other, other_opt = trained(1)
    checkpoint = dt.load(path)
    other.load_state_dict(checkpoint["model"])
    other_opt.load_state_dict(checkpoint["optimizer"])
    assert checkpoint["epoch"] == 3
    for model, optimizer in ((net, opt), (other, other_opt)):
        dt.manual_seed(7)
        optimizer.zero_grad()
        model(dt.randn(5, 3)).pow(2).mean().backward()
        optimizer.step()
    for (name, a), b in zip(net.state_dict().items(), other.state_dict().values()):
        assert a.numpy().tobytes() == b.numpy().tobytes(), name


def test_loading_takes_the_memory_of_the_tensors_not_of_the_file_twice(tmp_path):
    """The whole file read into bytes, then copied into arrays, took twice (or three times)
    the size of the tensors; copied out of a memory map, it takes the tensors' size."""
    path = tmp_path / "big.safetensors"
    size = 64 << 20
    dt.save({"w": np.ones(size // 4, dtype=np.float32)}, path)
    tracemalloc.start()
    try:
        loaded = dt.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert loaded["w"].shape == (size // 4,) and float(loaded["w"][-1]) == 1.0
    assert peak < 1.25 * size, f"loading a {size >> 20} MiB tensor took {peak / 2**20:.0f} MiB"


def test_safetensors_itself_refuses_a_header_that_claims_more_than_the_file(tmp_path):
    """What dt.load relies on after its own checks: safetensors' lazy reader compares the
    header's offsets with the file's real size before it allocates anything."""
    header = json.dumps({"w": {"dtype": "F32", "shape": [2**29],
                               "data_offsets": [0, 2**31]}}).encode()
    path = tmp_path / "claims-2-GiB.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    with open(path, "r+b") as file:
        file.truncate(4096)
    tracemalloc.start()
    try:
        with pytest.raises(SafetensorError, match="incomplete metadata"):
            with safe_open(str(path), framework="np") as file:
                file.get_tensor("w")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.skipif(os.name != "posix", reason="/dev/fd is POSIX's")
def test_the_file_checked_is_the_file_read_even_if_its_name_is_replaced(tmp_path):
    path = tmp_path / "w.safetensors"
    dt.save({"w": dt.ones(2)}, path)
    replacement = tmp_path / "other.safetensors"
    dt.save({"w": dt.zeros(2)}, replacement)
    with _open_regular_file(str(path)) as file:
        os.replace(replacement, path)               # someone swaps the file after the check
        with safe_open(_reopenable(file.fileno(), str(path)), framework="np") as reader:
            assert reader.get_tensor("w").tolist() == [1.0, 1.0]


def test_a_link_to_a_regular_file_loads(tmp_path):
    path = tmp_path / "w.safetensors"
    dt.save({"w": dt.arange(3)}, path)
    link = tmp_path / "latest.safetensors"
    try:
        link.symlink_to(path)
    except OSError:
        pytest.skip("no symbolic links here")
    assert dt.load(link)["w"].tolist() == [0, 1, 2]


def test_tensors_of_every_shape_come_back_writable(tmp_path):
    path = tmp_path / "shapes.safetensors"
    saved = {"scalar": np.array(2.5), "empty": np.zeros((0, 3), np.int8),
             "flags": np.array([True, False]),
             "matrix": np.arange(6, dtype=np.uint16).reshape(2, 3)}
    dt.save(saved, path)
    loaded = dt.load(path, as_numpy=True)
    assert list(loaded) == list(saved)
    for key, value in saved.items():
        assert loaded[key].dtype == value.dtype and loaded[key].shape == value.shape, key
        assert loaded[key].tobytes() == value.tobytes() and loaded[key].flags.writeable, key
