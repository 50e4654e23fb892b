"""Issue 14 for io: bad input is refused, named, and changes nothing (data's and the lab's are
in tests/data/test_bad_input.py and tests/lab/test_bad_input.py).

Each test is one hostile input (most come from a catalogue run against the kit) and uses
``refused(call, error, *names, state=[...])`` from ``tests/bad_input.py``: the call must raise
``error``, the message must name the function, argument, key or file, and every object in
``state`` (a file is given by its path, and compared byte for byte) must be bit-identical
afterwards.
"""
from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import dltutor as dt
from dltutor import nn
from dltutor.io import CheckpointError

from bad_input import refused

NAN, INF = math.nan, math.inf


# -- io: files that are not what they claim --------------------------------------------------
def write_safetensors(path, header):
    """A safetensors file with ``header`` (a dict, or JSON text written as it is) and exactly as
    many data bytes as its entries' well-formed offsets ask for (4 for a header given as text),
    so that each file is wrong in one way only."""
    if isinstance(header, str):
        text, size = header, 4
    else:
        text = json.dumps(header)
        ends = [e["data_offsets"][-1] for e in header.values() if isinstance(e, dict)
                and isinstance(e.get("data_offsets"), list) and e["data_offsets"]
                and type(e["data_offsets"][-1]) is int and e["data_offsets"][-1] >= 0]
        size = max(ends, default=0)
    blob = text.encode("utf-8")
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + b"\0" * min(size, 64))
    return path


def entry(dtype="F32", shape=(1,), offsets=(0, 4)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


def dltutor_file(tree, tensors=None, version=1):
    """A header whose dltutor metadata holds ``tree`` (and ``tensors``: name -> entry)."""
    document = json.dumps({"version": version, "tree": tree})
    return {"__metadata__": {"dltutor": document}, **(tensors or {})}


def nested_json(depth):
    return "[" * depth + "]" * depth


class Folder:
    """A folder's file names, for ``refused(state=...)``: a refused save leaves no file behind."""

    def __init__(self, path):
        self.path = str(path)

    def state_dict(self):
        return sorted(os.listdir(self.path))


def nested_tree(levels):
    """dltutor metadata whose tree is a dict holding ``levels`` lists inside each other."""
    lists = '{"list": [' * levels + "]}" * levels
    return '{"version": 1, "tree": {"dict": [["x", ' + lists + "]]}}"


BAD_HEADERS = {
    "dtype given as a list": {"a": entry(dtype=["F32"])},
    "dtype given as a dict": {"a": entry(dtype={"F": 32})},
    "dtype unknown": {"a": entry(dtype="X9")},
    "offsets [0, Infinity]": '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, Infinity]}}',
    "offsets [0, NaN]": '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, NaN]}}',
    "offsets [0, 1e300]": {"a": entry(offsets=(0, 1e300))},
    "offsets [0, -4]": {"a": entry(offsets=(0, -4))},
    "offsets reversed [4, 0]": {"a": entry(offsets=(4, 0))},
    "offsets as strings": {"a": entry(offsets=("0", "4"))},
    "offsets as bools": {"a": entry(offsets=(False, True))},
    "offsets as floats": {"a": entry(offsets=(0.0, 4.0))},
    "three offsets": {"a": entry(offsets=(0, 4, 8))},
    "offsets past the file": {"a": entry(shape=(100,), offsets=(0, 400))},
    "shape negative": {"a": entry(shape=(-1,))},
    "shape with a float": {"a": entry(shape=(1.5,))},
    "shape with a string": {"a": entry(shape=("1",))},
    "shape not a list": {"a": {"dtype": "F32", "shape": 1, "data_offsets": [0, 4]}},
    "shape that does not fit the offsets": {"a": entry(shape=(3,), offsets=(0, 4))},
    "entry is a string": {"a": "F32"},
    "entry without dtype": {"a": {"shape": [1], "data_offsets": [0, 4]}},
    "two tensors overlapping": {"a": entry(offsets=(0, 8), shape=(2,)), "b": entry(offsets=(4, 8))},
    "deeply nested JSON in the header": '{"a": ' + nested_json(100_000) + "}",
    "duplicate keys": '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
                      '"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}',
    "__metadata__ is a list": {"__metadata__": ["x"]},
    "__metadata__ value not a string": {"__metadata__": {"dltutor": {"version": 1}}},
    "header is a JSON list": "[1, 2]",
    "dltutor metadata deeply nested": {"__metadata__": {"dltutor": nested_json(100_000)}},
    "dltutor metadata not JSON": {"__metadata__": {"dltutor": "{version: 1"}},
    "dltutor version true": dltutor_file({"dict": []}, version=True),
    "dltutor version '1'": dltutor_file({"dict": []}, version="1"),
    "dltutor tree nested 5000 levels": {"__metadata__": {"dltutor": nested_tree(5000)}},
    "dltutor tree nested 200 levels": {"__metadata__": {"dltutor": nested_tree(200)}},
    "dltutor tensor key is a list": dltutor_file({"dict": [["w", {"tensor": ["a"]}]]},
                                                 {"a": entry()}),
    "dltutor tensor key is a dict": dltutor_file({"dict": [["w", {"tensor": {"a": 1}}]]},
                                                 {"a": entry()}),
    "dltutor tensor named twice": dltutor_file(
        {"dict": [["w", {"tensor": "a"}], ["v", {"tensor": "a"}]]}, {"a": entry()}),
    "dltutor tensor missing": dltutor_file({"dict": [["w", {"tensor": "zz"}]]}),
    "dltutor int 1.5": dltutor_file({"dict": [["epoch", {"int": 1.5}]]}),
}


@pytest.mark.parametrize("label", list(BAD_HEADERS))
def test_a_malformed_header_is_a_checkpoint_error_naming_the_file(tmp_path, label):
    path = write_safetensors(tmp_path / "bad weights.safetensors", BAD_HEADERS[label])
    refused(lambda: dt.load(path), CheckpointError, path.name, state=[path])


@pytest.mark.parametrize("label, make, problem", [
    ("empty", lambda good: b"", "empty"),
    ("3 bytes", lambda good: good[:3], "truncated"),
    ("header cut off", lambda good: good[:20], "truncated"),
    ("data cut off", lambda good: good[:-5], "truncated"),
    ("a text file", lambda good: b"these are my notes, not weights\n", "not a safetensors"),
    ("a pickle", lambda good: b"\x80\x04\x95" + b"\0" * 20, "pickle"),
    ("a zip archive", lambda good: b"PK\x03\x04" + b"\0" * 20, "zip"),
    ("header length 2**63", lambda good: struct.pack("<Q", 2**63) + good[8:], "not a safetensors"),
])
def test_a_file_that_is_not_a_whole_safetensors_file_is_named(tmp_path, label, make, problem):
    good = tmp_path / "good.safetensors"
    dt.save({"w": dt.ones(4, 4), "epoch": 1}, good)
    path = tmp_path / "broken.safetensors"
    path.write_bytes(make(good.read_bytes()))
    refused(lambda: dt.load(path), CheckpointError, path.name, problem, state=[path])


def test_load_of_a_missing_file_names_it_and_says_what_to_do(tmp_path):
    path = tmp_path / "missing.safetensors"
    refused(lambda: dt.load(path), FileNotFoundError, str(path), "dt.save", state=[Folder(tmp_path)])


def test_load_of_a_folder_names_it(tmp_path):
    refused(lambda: dt.load(tmp_path), IsADirectoryError, str(tmp_path), "folder")


# -- io: what is not a regular file is refused at once, without reading (issue 46) -------------
def refused_in_a_child(path, *names, setup="", timeout=30):
    """Run ``refused(lambda: dt.load(path), CheckpointError, *names)`` in a fresh Python, so
    that a load that blocks or eats memory is killed (after ``timeout`` seconds, or at 4 GiB),
    failing the test instead of the suite. Returns the call's seconds and its peak memory in
    MiB: the allocations Python traced, and the rise of the resident size. ``setup`` is code
    the child runs just before."""
    code = f"""
import resource, sys, time, tracemalloc
sys.path.insert(0, {os.path.dirname(os.path.dirname(__file__))!r})
import dltutor as dt
from dltutor.io import CheckpointError
from bad_input import refused
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))   # a regression: MemoryError
PATH = {str(path)!r}
{setup}
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
start = time.monotonic()
refused(lambda: dt.load(PATH), CheckpointError, *{names!r})
seconds = time.monotonic() - start
traced = tracemalloc.get_traced_memory()[1] / 2**20
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
print(f"{{seconds:.3f}} {{traced:.1f}} {{grown:.1f}}")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return [float(n) for n in done.stdout.split()]


posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs and /dev are POSIX's")


@posix_only
def test_load_of_a_fifo_is_refused_within_a_second_naming_it(tmp_path):
    fifo = str(tmp_path / "weights.safetensors")
    os.mkfifo(fifo)                     # opening it to read would wait for ever for a writer
    seconds, _, _ = refused_in_a_child(fifo, fifo, "named pipe (FIFO)", "regular file")
    assert seconds < 1


@posix_only
def test_a_fifo_put_in_place_of_a_checked_file_is_refused_once_open(tmp_path):
    """Between the check of the name and the open, a FIFO can take the file's place: the open
    does not wait for a writer (O_NONBLOCK), and the open file is checked again."""
    fifo = str(tmp_path / "weights.safetensors")
    os.mkfifo(fifo)
    looks_regular = "import os; real = os.stat; os.stat = lambda *a, **k: real(sys.executable)"
    seconds, _, _ = refused_in_a_child(fifo, fifo, "named pipe (FIFO)", setup=looks_regular)
    assert seconds < 1


@posix_only
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_load_of_dev_zero_is_refused_at_once_without_reading():
    seconds, traced, _ = refused_in_a_child("/dev/zero", "/dev/zero", "character device")
    assert seconds < 1 and traced < 1


@posix_only
def test_a_link_to_a_device_is_refused_as_the_device(tmp_path):
    link = tmp_path / "weights.safetensors"
    link.symlink_to("/dev/null")
    refused(lambda: dt.load(link), CheckpointError, str(link), "character device")


@posix_only
def test_a_4_kib_file_whose_header_claims_2_gib_is_refused_without_allocating(tmp_path):
    path = tmp_path / "sparse.safetensors"
    write_safetensors(path, {"w": entry(shape=(2**29,), offsets=(0, 2**31))})
    with open(path, "r+b") as file:
        file.truncate(4096)             # the rest of the 4 KiB is a hole: a sparse file
    _, traced, grown = refused_in_a_child(path, path.name, "truncated", str(2**31))
    assert traced < 1 and grown < 64   # MiB: the header only, never 2 GiB


# -- io: saving what cannot be saved leaves the old file whole ---------------------------------
def deep(levels):
    root = node = {}
    for _ in range(levels):
        node["x"] = {}
        node = node["x"]
    return root


@pytest.mark.parametrize("label, obj, error, names", [
    ("a set", {"a": {1, 2}}, TypeError, ["obj['a']", "set"]),
    ("a lambda", {"a": lambda: 0}, TypeError, ["obj['a']", "function"]),
    ("a string array", {"a": np.array(["x", "y"])}, TypeError, ["obj['a']", "<U1"]),
    ("a complex array", {"a": np.array([1j])}, TypeError, ["obj['a']", "complex128"]),
    ("bytes", {"a": b"raw"}, TypeError, ["obj['a']", "bytes"]),
    ("a float dict key", {1.5: dt.ones(1)}, TypeError, ["1.5", "keys must be str or int"]),
    ("a tuple dict key", {"m": {("a",): dt.ones(1)}}, TypeError, ["obj['m']", "('a',)"]),
    ("a module inside", {"model": nn.Linear(2, 2)}, TypeError, ["obj['model']", "state_dict"]),
    ("a whole module", nn.Linear(2, 2), TypeError, ["cannot save obj:", "model.state_dict()"]),
    ("a plain number", 3, TypeError, ["takes a tensor", "got 3 (int)", "put it in a dict"]),
    ("nested 5000 levels", deep(5000), ValueError, ["obj['x']['x']", "nested more than 100"]),
    ("contains itself", None, ValueError, ["contains itself"]),
    ("the reserved key", {"__metadata__": dt.ones(1)}, ValueError, ["__metadata__"]),
])
def test_save_refuses_what_it_cannot_store_and_keeps_the_old_file(tmp_path, label, obj, error,
                                                                   names):
    if obj is None:
        obj = {"w": dt.ones(1)}
        obj["me"] = obj
    path = tmp_path / "checkpoint.safetensors"
    dt.save({"w": dt.ones(2, 3)}, path)
    refused(lambda: dt.save(obj, path), error, *names, state=[path, Folder(tmp_path)])
    assert os.listdir(tmp_path) == ["checkpoint.safetensors"]    # no temporary file left


def test_save_to_a_folder_names_it(tmp_path):
    refused(lambda: dt.save({"w": dt.ones(1)}, tmp_path), IsADirectoryError, str(tmp_path),
            "folder", state=[Folder(tmp_path)])


def test_save_into_a_missing_folder_names_it_and_says_what_to_do(tmp_path):
    path = tmp_path / "runs" / "w.safetensors"
    refused(lambda: dt.save({"w": dt.ones(1)}, path), FileNotFoundError, str(path),
            "os.makedirs", state=[Folder(tmp_path)])


def test_save_below_a_file_says_it_is_not_a_folder(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    path = notes / "w.safetensors"
    refused(lambda: dt.save({"w": dt.ones(1)}, path), NotADirectoryError, str(path), "not a folder",
            state=[notes, Folder(tmp_path)])


def test_load_as_numpy_takes_a_flag(tmp_path):
    path = tmp_path / "w.safetensors"
    dt.save({"w": dt.ones(1)}, path)
    refused(lambda: dt.load(path, as_numpy="yes"), TypeError, "as_numpy", "'yes'", state=[path])


@pytest.mark.parametrize("path, names", [("", ["empty"]), ("a\x00b.safetensors", ["NUL"])])
def test_save_to_an_impossible_path_says_why(path, names):
    refused(lambda: dt.save({"w": dt.ones(1)}, path), ValueError, *names)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_save_where_no_file_can_be_written_names_the_path():
    refused(lambda: dt.save({"w": dt.ones(1)}, "/proc/version"), OSError, "/proc/version",
            "could not write", state=["/proc/version"])


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_save_into_a_read_only_folder_keeps_the_old_file(tmp_path):
    path = tmp_path / "w.safetensors"
    dt.save({"w": dt.ones(2)}, path)
    os.chmod(tmp_path, 0o500)
    try:
        refused(lambda: dt.save({"w": dt.zeros(2)}, path), PermissionError, str(path),
                state=[path])
    finally:
        os.chmod(tmp_path, 0o700)


# -- io: random damage never gives anything but a CheckpointError -----------------------------
def _good_file_bytes():
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "good.safetensors")
        dt.save({"model": {"0.weight": dt.tensor(np.arange(6.0).reshape(2, 3)),
                           "0.bias": dt.zeros(2)}, "epoch": 3, "lr": 0.1, "best": INF}, path)
        with open(path, "rb") as file:
            return file.read()


GOOD = _good_file_bytes()


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.integers(0, len(GOOD) - 1), st.integers(0, 255)),
                      min_size=1, max_size=4),
       cut=st.one_of(st.none(), st.integers(0, len(GOOD) - 1)))
def test_a_damaged_file_loads_whole_or_raises_a_checkpoint_error_naming_it(edits, cut):
    """Overwrite a few bytes (and maybe cut the file short): ``load`` either returns a complete
    structure or raises CheckpointError naming the file, never a TypeError, OverflowError,
    RecursionError or KeyError from inside. (safetensors has no checksum, so a changed byte in
    the tensor data loads as a changed value; the header and metadata are fully checked.)"""
    blob = bytearray(GOOD)
    for position, value in edits:
        blob[position] = value
    if cut is not None:
        blob = blob[:cut]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "damaged.safetensors")
        with open(path, "wb") as file:
            file.write(bytes(blob))
        try:
            loaded = dt.load(path)
        except CheckpointError as err:
            assert path in str(err) and err.path == path
            return
    assert isinstance(loaded, dict)
    if bytes(blob[:8 + struct.unpack("<Q", GOOD[:8])[0]]) == GOOD[:8 + struct.unpack(
            "<Q", GOOD[:8])[0]]:               # header untouched: the same structure
        assert list(loaded) == ["model", "epoch", "lr", "best"]
        assert loaded["model"]["0.weight"].shape == (2, 3)

