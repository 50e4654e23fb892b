"""dt.save / dt.load: safetensors files, exact round trips, atomic saves and clear errors."""
from __future__ import annotations

import json
import math
import os
import pathlib
import pickle
import struct
from collections import OrderedDict

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import dltutor as dt
import dltutor.io as dio
from dltutor import backend as B
from dltutor.io import CheckpointError, load, save
from dltutor.nn import Parameter

import marked_backend


def flat_state():
    return {
        "0.weight": Parameter(np.arange(6, dtype=np.float32).reshape(2, 3)),
        "0.bias": dt.tensor(np.array([0.5, -1.5], dtype=np.float64)),
        "0.block 0.0.bias": dt.tensor(np.array([1, 2, 3], dtype=np.int64)),
        "mask": dt.tensor(np.array([True, False, True])),
        "scalar": dt.tensor(np.array(3.25, dtype=np.float32)),
        "empty": dt.tensor(np.zeros((0, 4), dtype=np.float32)),
        "a/b~c": dt.tensor(np.array([7.0], dtype=np.float32)),
    }


def assert_same_tensor(got, want):
    assert isinstance(got, dt.Tensor) and not isinstance(got, Parameter)
    assert got.requires_grad is False
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# -- round trips --------------------------------------------------------------------------------
def test_flat_state_dict_round_trip(tmp_path):
    state = flat_state()
    path = tmp_path / "model.safetensors"
    save(state, path)
    loaded = load(path)
    assert list(loaded) == list(state)  # same names, same order
    for name in state:
        assert_same_tensor(loaded[name], state[name])
    assert loaded["0.weight"].dtype == np.float32
    assert loaded["0.bias"].dtype == np.float64
    assert loaded["0.block 0.0.bias"].dtype == np.int64
    assert loaded["mask"].dtype == np.bool_
    assert loaded["scalar"].shape == () and loaded["scalar"].item() == 3.25
    assert loaded["empty"].shape == (0, 4)


def test_flat_state_dict_keys_are_the_names_for_other_readers(tmp_path):
    path = tmp_path / "model.safetensors"
    save(flat_state(), path)
    raw = load_file(str(path))
    # Dots and spaces are kept; only "~" and "/" are escaped (JSON pointer style).
    assert set(raw) == {"0.weight", "0.bias", "0.block 0.0.bias", "mask", "scalar", "empty",
                        "a~1b~0c"}
    np.testing.assert_array_equal(raw["0.weight"], np.arange(6, dtype=np.float32).reshape(2, 3))
    assert raw["0.block 0.0.bias"].dtype == np.int64


def test_loaded_state_dict_goes_into_another_layer_of_the_same_shape(tmp_path):
    # dt.save(net[2].state_dict(), p); other.load_state_dict(dt.load(p)), without a Module yet.
    source = {"weight": Parameter(dt.randn(3, 2)), "bias": Parameter(dt.randn(3))}
    target = {"weight": Parameter(dt.zeros(3, 2)), "bias": Parameter(dt.zeros(3))}
    path = tmp_path / "last.safetensors"
    save(source, path)
    for name, value in load(path).items():
        target[name].set_value(value)
    for name in source:
        np.testing.assert_array_equal(target[name].numpy(), source[name].numpy())


def test_tied_parameter_is_written_under_every_alias(tmp_path):
    shared = Parameter(dt.randn(4, 2))
    path = tmp_path / "tied.safetensors"
    save({"encoder.weight": shared, "decoder.weight": shared}, path)
    raw = load_file(str(path))
    assert set(raw) == {"encoder.weight", "decoder.weight"}
    np.testing.assert_array_equal(raw["encoder.weight"], raw["decoder.weight"])


def test_nested_checkpoint_round_trip(tmp_path):
    exp_avg = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    checkpoint = {
        "model": {"0.weight": dt.ones(2, 3), "0.bias": dt.zeros(2)},
        "optimizer": {
            "state": {"0.weight": {"step": 3, "exp_avg": exp_avg}},
            "param_groups": [{"lr": 0.1, "params": ["0.weight", "0.bias"], "betas": [0.9, 0.999],
                              "nesterov": False, "name": None}],
        },
        "epoch": 2,
        "best_loss": math.inf,
        "worst": -math.inf,
        "last_loss": math.nan,
        "whole_float": 3.0,
        "neg_zero": -0.0,
        "big": 2 ** 70,
        "note": "ünïcode / ~ \"quoted\"",
        "betas": (0.9, 0.999),
        "nested": [[1, 2.5, None], (), [], {}],
        5: "an int key",
    }
    path = tmp_path / "checkpoint.safetensors"
    save(checkpoint, path)
    loaded = load(path)

    assert list(loaded) == list(checkpoint)
    assert_same_tensor(loaded["model"]["0.weight"], checkpoint["model"]["0.weight"])
    got_avg = loaded["optimizer"]["state"]["0.weight"]["exp_avg"]
    assert isinstance(got_avg, dt.Tensor) and got_avg.dtype == np.float32
    np.testing.assert_array_equal(got_avg.numpy(), exp_avg)

    step = loaded["optimizer"]["state"]["0.weight"]["step"]
    assert step == 3 and type(step) is int
    assert loaded["optimizer"]["param_groups"] == checkpoint["optimizer"]["param_groups"]
    assert type(loaded["optimizer"]["param_groups"][0]["lr"]) is float
    assert type(loaded["optimizer"]["param_groups"][0]["betas"]) is list
    assert loaded["epoch"] == 2 and type(loaded["epoch"]) is int
    assert loaded["best_loss"] == math.inf and loaded["worst"] == -math.inf
    assert math.isnan(loaded["last_loss"])
    assert loaded["whole_float"] == 3.0 and type(loaded["whole_float"]) is float
    assert math.copysign(1.0, loaded["neg_zero"]) == -1.0
    assert loaded["big"] == 2 ** 70
    assert loaded["note"] == checkpoint["note"]
    assert loaded["betas"] == (0.9, 0.999) and type(loaded["betas"]) is tuple  # tuples stay tuples
    assert loaded["nested"] == [[1, 2.5, None], (), [], {}]
    assert loaded[5] == "an int key"


def test_nested_keys_for_other_readers_and_strict_json_metadata(tmp_path):
    path = tmp_path / "checkpoint.safetensors"
    save({"model": {"0.weight": dt.ones(2)},
          "optimizer": {"state": {0: {"exp_avg": dt.zeros(2)}}, "groups": [dt.ones(1)]},
          "x/y": {"~": dt.ones(1)},
          "loss": math.nan}, path)
    assert set(load_file(str(path))) == {"model/0.weight", "optimizer/state/0/exp_avg",
                                         "optimizer/groups/0", "x~1y/~0"}
    from safetensors import safe_open
    with safe_open(str(path), "np") as f:
        metadata = f.metadata()
    assert set(metadata) == {"dltutor"}
    document = json.loads(metadata["dltutor"], parse_constant=lambda c: pytest.fail(c))
    assert document["version"] == 1
    assert ["loss", {"float": "nan"}] in document["tree"]["dict"]


def test_numpy_values_and_scalars(tmp_path):
    path = tmp_path / "np.safetensors"
    big_endian = np.arange(3, dtype=">f4")
    transposed = np.arange(6, dtype=np.float64).reshape(2, 3).T
    save({"be": big_endian, "t": transposed, "f32": np.float32(0.5), "i": np.int64(4),
          "b": np.bool_(True), "od": OrderedDict(a=1)}, path)
    loaded = load(path)
    np.testing.assert_array_equal(loaded["be"].numpy(), [0, 1, 2])
    assert loaded["be"].dtype == np.float32
    np.testing.assert_array_equal(loaded["t"].numpy(), transposed)
    assert loaded["f32"] == 0.5 and type(loaded["f32"]) is float
    assert loaded["i"] == 4 and type(loaded["i"]) is int
    assert loaded["b"] is True
    assert loaded["od"] == {"a": 1} and type(loaded["od"]) is dict


def test_as_numpy(tmp_path):
    path = tmp_path / "m.safetensors"
    save({"w": dt.ones(2, 2), "groups": [{"lr": 0.1, "m": np.arange(3)}]}, path)
    loaded = load(path, as_numpy=True)
    assert type(loaded["w"]) is np.ndarray and loaded["w"].dtype == np.float32
    assert type(loaded["groups"][0]["m"]) is np.ndarray and loaded["groups"][0]["m"].dtype == np.int64
    assert loaded["groups"][0]["lr"] == 0.1
    loaded["w"][0, 0] = 5.0  # a normal, writable array


def test_only_scalars_and_empty_dict(tmp_path):
    path = tmp_path / "s.safetensors"
    save({"epoch": 1}, path)
    assert load(path) == {"epoch": 1}
    assert load_file(str(path)) == {}
    save({}, path)
    assert load(path) == {}


def test_load_makes_tensors_on_the_current_backend(tmp_path):
    marked_backend.register()
    path = tmp_path / "m.safetensors"
    with B.use("marked"):
        save({"w": dt.ones(2, dtype=dt.float64)}, path)  # saving a backend array goes via NumPy
        loaded = load(path)
    assert isinstance(loaded["w"].data, marked_backend.Marked)
    assert loaded["w"].dtype == np.float64
    assert type(load_file(str(path))["w"]) is np.ndarray


def test_str_and_pathlike_paths(tmp_path):
    save({"w": dt.ones(1)}, str(tmp_path / "a.safetensors"))
    save({"w": dt.ones(1)}, pathlib.Path(tmp_path) / "b.safetensors")
    assert load(str(tmp_path / "b.safetensors"))["w"].item() == 1.0
    assert load(tmp_path / "a.safetensors")["w"].item() == 1.0


# -- files from other programs ------------------------------------------------------------------
def test_plain_safetensors_file_loads_as_a_flat_dict(tmp_path):
    path = tmp_path / "other.safetensors"
    save_file({"encoder.layer.0.weight": np.ones((2, 2), np.float32),
               "ids": np.arange(3, dtype=np.int64)}, str(path), metadata={"format": "pt"})
    loaded = load(path)
    assert set(loaded) == {"encoder.layer.0.weight", "ids"}
    assert loaded["encoder.layer.0.weight"].dtype == np.float32
    assert loaded["ids"].dtype == np.int64 and loaded["ids"].tolist() == [0, 1, 2]
    assert load(path, as_numpy=True)["ids"].dtype == np.int64


# -- atomic saving ------------------------------------------------------------------------------
def _crash(*args, **kwargs):
    raise OSError("simulated crash")


@pytest.mark.parametrize("target", ["replace", "fsync", "write"])
def test_failed_save_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch, target):
    path = tmp_path / "ckpt.safetensors"
    save({"w": dt.ones(3)}, path)
    before = path.read_bytes()
    if target == "replace":
        monkeypatch.setattr(dio.files.os, "replace", _crash)
    elif target == "fsync":
        monkeypatch.setattr(dio.files.os, "fsync", _crash)
    else:
        def half_then_crash(file, blob):
            file.write(blob[: len(blob) // 2])
            raise OSError("simulated crash")
        monkeypatch.setattr(dio.files, "_write_all", half_then_crash)
    with pytest.raises(OSError, match="simulated crash"):
        save({"w": dt.zeros(3), "extra": dt.ones(100)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    assert load(path)["w"].tolist() == [1.0, 1.0, 1.0]


def test_failed_first_save_creates_no_file(tmp_path, monkeypatch):
    monkeypatch.setattr(dio.files.os, "replace", _crash)
    with pytest.raises(OSError):
        save({"w": dt.ones(3)}, tmp_path / "new.safetensors")
    assert os.listdir(tmp_path) == []


def test_save_overwrites_and_creates_no_other_files(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    save({"w": dt.ones(3)}, path)
    save({"w": dt.zeros(2)}, path)
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    assert load(path)["w"].tolist() == [0.0, 0.0]


def test_unsavable_value_touches_no_file(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    save({"w": dt.ones(3)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        save({"w": dt.zeros(3), "f": print}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]


def test_save_into_a_missing_folder_or_onto_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save({"w": dt.ones(1)}, tmp_path / "nope" / "m.safetensors")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        save({"w": dt.ones(1)}, tmp_path)
    assert os.listdir(tmp_path) == []


# -- what cannot be saved -----------------------------------------------------------------------
class FakeModule:
    pass


@pytest.mark.parametrize("obj, where, type_name, advice", [
    ({"model": FakeModule()}, "obj['model']", "FakeModule", "Convert it to one of these"),
    ({"opt": {"hook": print}}, "obj['opt']['hook']", "builtin_function_or_method",
     "Convert it to one of these"),
    ({"groups": [{"w": np.array([object()], dtype=object)}]}, "obj['groups'][0]['w']", "object",
     "convert it to a bool, int or float dtype"),
    ({"c": 1 + 2j}, "obj['c']", "complex", "Convert it to one of these"),
    ({"s": {1, 2}}, "obj['s']", "set", "sorted(s)"),
])
def test_unsupported_values_name_the_path_and_type(tmp_path, obj, where, type_name, advice):
    with pytest.raises(TypeError) as info:
        save(obj, tmp_path / "x.safetensors")
    message = str(info.value)
    assert where in message and type_name in message and advice in message
    assert "state_dict" not in message  # advice about models only where there is a model
    assert os.listdir(tmp_path) == []


def test_top_level_must_be_a_tensor_or_a_container(tmp_path):
    # Tensors, lists and tuples at the top level: see test_io_tensors.py.
    with pytest.raises(TypeError, match=r"cannot save obj: a [\w.]*FakeModule.*Convert it"):
        save(FakeModule(), tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match=r"takes a tensor, an array, or a list.*got 3 \(int\)"):
        save(3, tmp_path / "x.safetensors")
    assert os.listdir(tmp_path) == []


def test_bad_keys_and_cycles(tmp_path):
    path = tmp_path / "x.safetensors"
    with pytest.raises(TypeError, match=r"obj\['a'\].*dict keys must be str or int.*\(1, 2\)"):
        save({"a": {(1, 2): dt.ones(1)}}, path)
    with pytest.raises(ValueError, match="__metadata__"):
        save({"__metadata__": dt.ones(1)}, path)
    with pytest.raises(ValueError, match=r"obj\[0\].*obj\['0'\]"):
        save({0: dt.ones(1), "0": dt.ones(1)}, path)
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(ValueError, match="contains itself"):
        save(loop, path)
    assert os.listdir(tmp_path) == []


# -- files that cannot be loaded ----------------------------------------------------------------
def _good_bytes(tmp_path):
    path = tmp_path / "good.safetensors"
    save({"w": dt.ones(4, 4), "epoch": 1}, path)
    return path.read_bytes()


def _expect_error(path, match):
    with pytest.raises(CheckpointError, match=match) as info:
        load(path)
    assert str(path) in str(info.value) and info.value.path == str(path)
    assert isinstance(info.value, ValueError)


def test_missing_file(tmp_path):
    path = tmp_path / "missing.safetensors"
    with pytest.raises(FileNotFoundError) as info:
        load(path)
    assert str(path) in str(info.value)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.safetensors"
    path.write_bytes(b"")
    _expect_error(path, "empty")


def test_text_file(tmp_path):
    path = tmp_path / "notes.safetensors"
    path.write_text("hello, these are my notes about the model\n")
    _expect_error(path, "not a safetensors file")


def test_json_file(tmp_path):
    path = tmp_path / "config.safetensors"
    path.write_text('{"lr": 0.1, "epochs": 3}')
    _expect_error(path, "not a safetensors file")


def test_pickle_file(tmp_path):
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps({"w": np.ones(3)}))
    _expect_error(path, "not a safetensors file.*pickle")


def test_zip_file(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    _expect_error(path, "zip")


def test_too_short_file(tmp_path):
    path = tmp_path / "short.safetensors"
    path.write_bytes(_good_bytes(tmp_path)[:5])
    _expect_error(path, "only 5 bytes")


def test_truncated_in_the_header(tmp_path):
    data = _good_bytes(tmp_path)
    header_len = struct.unpack("<Q", data[:8])[0]
    path = tmp_path / "cut.safetensors"
    path.write_bytes(data[:40])
    _expect_error(path, f"truncated: header says {header_len} bytes but file has 32")


def test_truncated_in_the_data(tmp_path):
    data = _good_bytes(tmp_path)
    path = tmp_path / "cut.safetensors"
    path.write_bytes(data[:-10])
    _expect_error(path, "truncated: header says the tensor data is 64 bytes but file has 54")


def test_corrupt_header_json(tmp_path):
    data = bytearray(_good_bytes(tmp_path))
    data[9:14] = b"#####"
    path = tmp_path / "bad.safetensors"
    path.write_bytes(bytes(data))
    _expect_error(path, "corrupt safetensors header")


def test_trailing_garbage(tmp_path):
    path = tmp_path / "long.safetensors"
    path.write_bytes(_good_bytes(tmp_path) + b"extra bytes")
    _expect_error(path, "corrupt safetensors file")


def _with_metadata(tmp_path, document):
    path = tmp_path / "meta.safetensors"
    save_file({"w": np.ones(2, np.float32)}, str(path), metadata={"dltutor": document})
    return path


@pytest.mark.parametrize("document, match", [
    ("{not json", "not valid JSON"),
    (json.dumps({"version": 1}), "no 'tree'"),
    (json.dumps({"version": 99, "tree": {"dict": []}}), "newer dltutor"),
    (json.dumps({"version": 1, "tree": {"dict": [["w", {"tensor": "nope"}]]}}), "'nope' is missing"),
    (json.dumps({"version": 1, "tree": {"dict": []}}), "does not mention"),
    (json.dumps({"version": 1, "tree": {"dict": [["w", {"tensor": "w"}], ["x", {"int": 1.5}]]}}),
     "bad node"),
    (json.dumps({"version": 1, "tree": {"int": 3}}), "top level is a plain value"),
])
def test_corrupt_dltutor_metadata(tmp_path, document, match):
    _expect_error(_with_metadata(tmp_path, document), match)


def test_unsupported_dtype_in_a_foreign_file(tmp_path):
    header = json.dumps({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    path = tmp_path / "bf16.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\x00" * 4)
    _expect_error(path, "BF16")


def test_header_length_that_looks_like_a_pickle_opcode_still_loads(tmp_path):
    # A header of 640 bytes starts the file with b"\x80\x02", which is also how a pickle starts.
    path = tmp_path / "m.safetensors"
    for length in range(1, 700):
        save({"w" * length: dt.ones(1)}, path)
        if path.read_bytes()[:2] == b"\x80\x02":
            break
    else:  # pragma: no cover
        pytest.fail("no name length gives a 640-byte header")
    assert load(path)["w" * length].tolist() == [1.0]


def test_cupy_array_made_outside_dltutor_is_saved_via_get(tmp_path):
    class FakeCupyArray:  # stands in for cupy.ndarray on machines without a GPU
        __module__ = "cupy._core.core"

        def get(self):
            return np.arange(3, dtype=np.float32)

    path = tmp_path / "gpu.safetensors"
    save({"w": FakeCupyArray()}, path)
    assert load_file(str(path))["w"].tolist() == [0.0, 1.0, 2.0]


def test_checkpoint_error_survives_pickling():
    err = pickle.loads(pickle.dumps(CheckpointError("x.safetensors", "the file is empty (0 bytes)")))
    assert err.path == "x.safetensors" and str(err) == "cannot load 'x.safetensors': the file is empty (0 bytes)"
