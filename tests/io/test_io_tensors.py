"""dt.save / dt.load with what D2L's file-I/O chapter saves: one tensor, a list or tuple of
tensors, a dict; torch.load's keywords (weights_only, map_location); and advice that fits
what a learner tried to save."""
from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file

import dltutor as dt
from dltutor import backend as B
from dltutor import nn, optim
from dltutor.nn import Parameter

import marked_backend
from bad_input import refused


def same_tensor(got, want):
    """``got`` is a plain tensor holding exactly ``want``'s values, dtype and shape."""
    assert type(got) is dt.Tensor and got.requires_grad is False
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# -- D2L's three snippets, as a learner types them ----------------------------------------------
def test_one_tensor(tmp_path):
    x = dt.arange(4)
    dt.save(x, tmp_path / "x-file")
    x2 = dt.load(tmp_path / "x-file")
    same_tensor(x2, x)
    assert x2.dtype == np.int64 and x2.tolist() == [0, 1, 2, 3]


def test_a_list_of_tensors(tmp_path):
    x = dt.arange(4)
    y = dt.zeros(4)
    dt.save([x, y], tmp_path / "x-files")
    loaded = dt.load(tmp_path / "x-files")
    assert type(loaded) is list and len(loaded) == 2
    x2, y2 = loaded
    same_tensor(x2, x)
    same_tensor(y2, y)
    assert x2.dtype == np.int64 and y2.dtype == np.float32


def test_a_dict_of_tensors(tmp_path):
    x = dt.arange(4)
    y = dt.zeros(4)
    mydict = {"x": x, "y": y}
    dt.save(mydict, tmp_path / "mydict")
    mydict2 = dt.load(tmp_path / "mydict")
    assert type(mydict2) is dict and list(mydict2) == ["x", "y"]
    same_tensor(mydict2["x"], x)
    same_tensor(mydict2["y"], y)


# -- the kinds and values come back as they went in ---------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "float64", "float32", "int32", "bool", "uint8"])
def test_a_tensor_keeps_its_dtype(tmp_path, dtype):
    x = dt.tensor(np.array([[1, 0, 3], [4, 5, 0]], dtype=dtype))
    dt.save(x, tmp_path / "x.safetensors")
    same_tensor(dt.load(tmp_path / "x.safetensors"), x)


def test_a_float64_tensor_keeps_every_bit(tmp_path):
    x = dt.tensor(np.array([0.1, 1 / 3, 1e-300, -2.5e300], dtype=np.float64))
    dt.save(x, tmp_path / "x.safetensors")
    x2 = dt.load(tmp_path / "x.safetensors")
    assert x2.dtype == np.float64
    assert x2.numpy().tobytes() == x.numpy().tobytes()


def test_a_zero_dimensional_tensor(tmp_path):
    dt.save(dt.tensor(2.5), tmp_path / "s.safetensors")
    loaded = dt.load(tmp_path / "s.safetensors")
    assert loaded.shape == () and loaded.item() == 2.5


def test_a_tuple_stays_a_tuple(tmp_path):
    pair = (dt.arange(3), dt.ones(2, 2))
    dt.save(pair, tmp_path / "pair")
    loaded = dt.load(tmp_path / "pair")
    assert type(loaded) is tuple and len(loaded) == 2
    same_tensor(loaded[0], pair[0])
    same_tensor(loaded[1], pair[1])


def test_a_list_of_dicts_and_plain_values(tmp_path):
    runs = [{"w": dt.arange(3), "lr": 0.1, "name": "first", "steps": (1, 2)},
            {"w": dt.ones(2), "lr": 0.01, "name": None, "steps": ()}]
    dt.save(runs, tmp_path / "runs")
    loaded = dt.load(tmp_path / "runs")
    assert type(loaded) is list and [list(d) for d in loaded] == [list(d) for d in runs]
    same_tensor(loaded[0]["w"], runs[0]["w"])
    same_tensor(loaded[1]["w"], runs[1]["w"])
    assert [d["lr"] for d in loaded] == [0.1, 0.01]
    assert [d["name"] for d in loaded] == ["first", None]
    assert loaded[0]["steps"] == (1, 2) and type(loaded[0]["steps"]) is tuple
    assert load_file(str(tmp_path / "runs")).keys() == {"0/w", "1/w"}


def test_an_empty_list_and_a_list_without_tensors(tmp_path):
    dt.save([], tmp_path / "a")
    assert dt.load(tmp_path / "a") == []
    dt.save([1, 2.5, "x"], tmp_path / "b")
    assert dt.load(tmp_path / "b") == [1, 2.5, "x"]


def test_a_parameter_saved_on_its_own_loads_as_a_plain_tensor(tmp_path):
    w = Parameter(dt.tensor(np.arange(6, dtype=np.float32).reshape(2, 3)))
    dt.save(w, tmp_path / "w")
    w2 = dt.load(tmp_path / "w")
    assert type(w2) is dt.Tensor and not isinstance(w2, Parameter)
    assert w2.requires_grad is False and w2.dtype == np.float32
    np.testing.assert_array_equal(w2.numpy(), np.arange(6).reshape(2, 3))


def test_a_numpy_array_saved_on_its_own_loads_as_a_tensor_or_with_as_numpy_as_an_array(tmp_path):
    a = np.arange(5, dtype=np.int32)
    dt.save(a, tmp_path / "a")
    t = dt.load(tmp_path / "a")
    assert type(t) is dt.Tensor and t.dtype == np.int32 and t.tolist() == [0, 1, 2, 3, 4]
    raw = dt.load(tmp_path / "a", as_numpy=True)
    assert type(raw) is np.ndarray and raw.dtype == np.int32
    np.testing.assert_array_equal(raw, a)


def test_a_lone_tensor_is_stored_under_the_key_tensor_for_other_readers(tmp_path):
    path = tmp_path / "x-file"
    dt.save(dt.arange(4), path)
    raw = load_file(str(path))
    assert list(raw) == ["tensor"]
    assert raw["tensor"].dtype == np.int64 and raw["tensor"].tolist() == [0, 1, 2, 3]
    with safe_open(str(path), "np") as f:
        document = json.loads(f.metadata()["dltutor"])
    assert document == {"version": 1, "tree": {"tensor": "tensor"}}


def test_a_dict_whose_key_is_tensor_is_still_a_dict(tmp_path):
    # The lone-tensor key cannot clash with a dict key: the tree says which one was saved.
    dt.save({"tensor": dt.ones(1)}, tmp_path / "d")
    loaded = dt.load(tmp_path / "d")
    assert type(loaded) is dict and loaded["tensor"].tolist() == [1.0]


def test_a_foreign_file_with_one_array_still_loads_as_a_dict(tmp_path):
    from safetensors.numpy import save_file
    save_file({"tensor": np.ones(2, np.float32)}, str(tmp_path / "other"))
    loaded = dt.load(tmp_path / "other")
    assert type(loaded) is dict and loaded["tensor"].tolist() == [1.0, 1.0]


# -- torch.load's keywords ---------------------------------------------------------------------
@pytest.fixture
def x_file(tmp_path):
    path = tmp_path / "x-file"
    dt.save(dt.arange(4), path)
    return path


@pytest.mark.parametrize("weights_only", [True, None])
def test_weights_only_true_or_none_loads(x_file, weights_only):
    assert dt.load(x_file, weights_only=weights_only).tolist() == [0, 1, 2, 3]


def test_weights_only_false_is_refused_saying_nothing_is_unpickled(x_file):
    refused(lambda: dt.load(x_file, weights_only=False), ValueError, "weights_only=False",
            "never unpickles", "only arrays and plain values", state=[x_file])


def test_weights_only_that_is_not_a_flag_is_refused(x_file):
    refused(lambda: dt.load(x_file, weights_only="yes"), TypeError, "weights_only", "'yes'",
            "True or None")


@pytest.mark.parametrize("map_location", [None, "cpu"])
def test_map_location_cpu_loads_on_the_cpu(x_file, map_location):
    x2 = dt.load(x_file, map_location=map_location)
    assert x2.device == "cpu" and type(x2.data) is np.ndarray and x2.tolist() == [0, 1, 2, 3]


def test_map_location_cpu_loads_on_the_cpu_while_another_backend_is_current(x_file):
    marked_backend.register()
    with B.use("marked"):
        on_marked = dt.load(x_file)
        on_cpu = dt.load(x_file, map_location="cpu")
    assert isinstance(on_marked.data, marked_backend.Marked)
    assert type(on_cpu.data) is np.ndarray and on_cpu.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("map_location", ["gpu", "cuda", "cuda:0"])
def test_map_location_gpu_loads_on_the_gpu_backend(x_file, monkeypatch, map_location):
    # No GPU on the test machines: the marked backend stands in for CuPy.
    marked_backend.register()
    monkeypatch.setitem(B._registry, "cupy", marked_backend.MARKED)
    x2 = dt.load(x_file, map_location=map_location)
    assert isinstance(x2.data, marked_backend.Marked) and x2.dtype == np.int64
    assert x2.tolist() == [0, 1, 2, 3]


@pytest.mark.skipif(B.gpu_available(), reason="this machine has a GPU")
@pytest.mark.parametrize("map_location", ["gpu", "cuda", "cuda:0"])
def test_map_location_gpu_without_cupy_gives_the_backends_error(tmp_path, map_location):
    with pytest.raises(B.GPUUnavailableError) as info:
        B.get("gpu")
    missing = tmp_path / "never-read.safetensors"   # the device is checked before the file
    refused(lambda: dt.load(missing, map_location=map_location), B.GPUUnavailableError,
            str(info.value))


@pytest.mark.parametrize("map_location, error, names", [
    ("tpu", ValueError, ["map_location='tpu'", "'cpu'", "'cuda:0'"]),
    ("cuda:1", ValueError, ["map_location='cuda:1'", "at most one GPU"]),
    ("CPU", ValueError, ["map_location='CPU'", "'cpu'"]),
    ({"cuda:0": "cpu"}, TypeError, ["map_location", "dict", "'cpu'"]),
    (lambda storage, loc: storage, TypeError, ["map_location", "function", "'cpu'"]),
    (0, TypeError, ["map_location", "int", "'gpu'"]),
])
def test_a_bad_map_location_is_refused_before_the_file_is_read(tmp_path, map_location, error,
                                                                names):
    missing = tmp_path / "missing.safetensors"     # reading it would be a FileNotFoundError
    refused(lambda: dt.load(missing, map_location=map_location), error, *names)


def test_a_bad_keyword_is_refused_before_the_file_is_read(tmp_path):
    missing = tmp_path / "missing.safetensors"
    refused(lambda: dt.load(missing, weights_only=False), ValueError, "weights_only")
    refused(lambda: dt.load(missing, as_numpy=1), TypeError, "as_numpy")


def test_as_numpy_with_a_gpu_map_location_is_refused(x_file):
    refused(lambda: dt.load(x_file, as_numpy=True, map_location="cuda"), ValueError,
            "as_numpy=True", "map_location='cuda'", "NumPy arrays")
    raw = dt.load(x_file, as_numpy=True, map_location="cpu")
    assert type(raw) is np.ndarray and raw.tolist() == [0, 1, 2, 3]


def test_keywords_are_keyword_only(x_file):
    with pytest.raises(TypeError):
        dt.load(x_file, False)


# -- what save refuses, with advice that fits ---------------------------------------------------
def test_a_whole_model_is_refused_with_state_dict_advice(tmp_path):
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    refused(lambda: dt.save(model, tmp_path / "model"), TypeError, "cannot save obj:",
            "Sequential", "model.state_dict()", "model.load_state_dict(dt.load(path))")
    dt.save(model.state_dict(), tmp_path / "model")     # the advice works
    assert list(dt.load(tmp_path / "model")) == list(model.state_dict())


def test_a_model_inside_a_checkpoint_is_named_with_state_dict_advice(tmp_path):
    refused(lambda: dt.save({"net": nn.Linear(2, 2), "epoch": 1}, tmp_path / "c"), TypeError,
            "obj['net']", "Linear", "model.state_dict()", state=[Folder(tmp_path)])


def test_an_optimizer_is_refused_with_its_own_state_dict_advice(tmp_path):
    model = nn.Linear(2, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    error = refused(lambda: dt.save(opt, tmp_path / "opt"), TypeError, "SGD",
                    "opt.state_dict()", "opt.load_state_dict(dt.load(path))",
                    state=[Folder(tmp_path)])
    assert "model.state_dict()" not in str(error)    # not the advice for a model
    refused(lambda: dt.save([model.state_dict(), opt], tmp_path / "both"), TypeError, "obj[1]",
            "opt.state_dict()")


def test_a_set_is_refused_with_advice_for_a_set(tmp_path):
    error = refused(lambda: dt.save({1, 2, 3}, tmp_path / "s"), TypeError, "cannot save obj:",
                    "a set", "int, float, bool, str, None", "list/tuple/dict", "sorted(s)",
                    state=[Folder(tmp_path)])
    assert "state_dict" not in str(error)
    refused(lambda: dt.save({"seen": {1, 2}}, tmp_path / "s"), TypeError, "obj['seen']",
            "sorted(s)")


def test_another_object_is_told_what_save_takes(tmp_path):
    class Marker:                             # any object of the learner's own
        pass

    error = refused(lambda: dt.save([dt.ones(1), Marker()], tmp_path / "m"), TypeError,
                    "obj[1]", "Marker", "not a tensor, an array or a plain value",
                    "Convert it to one of these")
    assert "state_dict" not in str(error)


@pytest.mark.parametrize("value, shown", [
    (3, "3 (int)"), (0.5, "0.5 (float)"), ("hello", "'hello' (str)"), (None, "None (NoneType)"),
    (True, "True (bool)"), (np.float32(2.0), "(numpy.float32)")])
def test_a_plain_value_on_its_own_is_refused_saying_to_name_it(tmp_path, value, shown):
    refused(lambda: dt.save(value, tmp_path / "v"), TypeError, "takes a tensor, an array",
            shown, "put it in a dict", state=[Folder(tmp_path)])


def test_a_refused_save_keeps_the_old_file(tmp_path):
    path = tmp_path / "x-file"
    dt.save(dt.arange(4), path)
    refused(lambda: dt.save([dt.zeros(2), nn.Linear(1, 1)], path), TypeError, "obj[1]",
            state=[path, Folder(tmp_path)])
    assert dt.load(path).tolist() == [0, 1, 2, 3]


def test_arguments_swapped_are_named(tmp_path):
    x = dt.arange(4)
    path = str(tmp_path / "x-file")
    refused(lambda: dt.save(path, x), TypeError, "object first and the path second",
            "dt.save(x, 'x-file')", state=[Folder(tmp_path)])


class Folder:
    """A folder's file names, for ``refused(state=...)``: a refused save writes no file."""

    def __init__(self, path):
        self.path = path

    def state_dict(self):
        return sorted(p.name for p in self.path.iterdir())
