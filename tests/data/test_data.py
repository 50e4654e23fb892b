"""Tests for dltutor.data: Dataset, TensorDataset, DataLoader (with worker threads), data sets."""
from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

import dltutor as dt
from dltutor import backend as B
from dltutor.data import (DataLoader, DataLoaderWorkerError, Dataset, TensorDataset,
                          default_collate, load_digits, make_circles, make_moons, make_sine,
                          make_spirals, make_tokens)

import marked_backend


def _loader_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("dltutor-loader")]


def _wait_for_no_loader_threads(timeout: float = 2.0) -> list[threading.Thread]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = _loader_threads()
        if not left:
            return []
        for t in left:
            t.join(0.05)
    return _loader_threads()


@pytest.fixture(autouse=True)
def _no_leftover_threads():
    """Every test must end with all loader threads gone."""
    yield
    if _loader_threads():
        gc.collect()
    assert _wait_for_no_loader_threads() == []


def _as_lists(loader) -> list:
    return [tuple(t.numpy().tolist() for t in batch) for batch in loader]


def _xy(n: int = 10, features: int = 3):
    X = np.arange(n * features, dtype=np.float32).reshape(n, features)
    y = np.arange(n, dtype=np.int64) % 3
    return X, y


# ---------------------------------------------------------------------------------------------
# TensorDataset
# ---------------------------------------------------------------------------------------------
def test_tensor_dataset_length_mismatch_names_the_lengths():
    with pytest.raises(ValueError, match=r"lengths \[5, 4\]"):
        TensorDataset(np.zeros((5, 2)), np.zeros(4))


def test_tensor_dataset_rejects_nothing_and_scalars():
    with pytest.raises(ValueError, match="at least one"):
        TensorDataset()
    with pytest.raises(ValueError, match="0-d"):
        TensorDataset(np.float32(3.0))


def test_tensor_dataset_indexing_and_inputs():
    X, y = _xy(4)
    ds = TensorDataset(dt.tensor(X), y, [0.5, 1.5, 2.5, 3.5])
    assert len(ds) == 4
    x1, y1, z1 = ds[1]
    np.testing.assert_array_equal(x1, X[1])
    assert y1 == y[1]
    assert ds.arrays[2].dtype == np.float32        # Python floats -> float32, as dt.tensor
    assert "4 samples" in repr(ds)


# ---------------------------------------------------------------------------------------------
# Batches
# ---------------------------------------------------------------------------------------------
def test_batch_shapes_dtypes_and_last_partial_batch():
    X, y = _xy(10)
    loader = DataLoader(TensorDataset(X, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    assert [b[0].shape for b in batches] == [(4, 3), (4, 3), (2, 3)]
    assert [b[1].shape for b in batches] == [(4,), (4,), (2,)]
    for xb, yb in batches:
        assert isinstance(xb, dt.Tensor) and isinstance(yb, dt.Tensor)
        assert xb.dtype == np.float32 and yb.dtype == np.int64
        assert not xb.requires_grad
    np.testing.assert_array_equal(batches[2][0].numpy(), X[8:])


def test_float64_keeps_its_dtype():
    (xb,) = next(iter(DataLoader(TensorDataset(np.zeros((3, 2))), batch_size=3)))
    assert xb.dtype == np.float64


def test_batches_are_copies_not_views():
    X, y = _xy(4)
    xb, _ = next(iter(DataLoader(TensorDataset(X, y), batch_size=4)))
    xb.data[...] = -1
    assert X.min() >= 0


def test_drop_last():
    X, y = _xy(10)
    loader = DataLoader(TensorDataset(X, y), batch_size=4, drop_last=True)
    batches = list(loader)
    assert len(loader) == len(batches) == 2
    assert all(b[0].shape == (4, 3) for b in batches)
    assert len(DataLoader(TensorDataset(X, y), batch_size=5, drop_last=True)) == 2
    assert len(DataLoader(TensorDataset(X, y), batch_size=11, drop_last=True)) == 0
    assert list(DataLoader(TensorDataset(X, y), batch_size=11, drop_last=True)) == []


@pytest.mark.parametrize("n,bs,expected", [(10, 1, 10), (10, 3, 4), (10, 10, 1), (10, 20, 1), (0, 4, 0)])
def test_len_is_number_of_batches(n, bs, expected):
    loader = DataLoader(TensorDataset(np.zeros((n, 2))), batch_size=bs)
    assert len(loader) == expected == len(list(loader))


def test_bad_arguments_are_explained():
    ds = TensorDataset(np.zeros(3))
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="seed"):
        DataLoader(ds, seed=-3)
    with pytest.raises(TypeError, match="__len__"):
        DataLoader(iter([1, 2]))


def test_batches_on_current_backend():
    marked_backend.register()
    X, y = _xy(6)
    with B.use("marked"):
        for workers in (0, 1):
            xb, yb = next(iter(DataLoader(TensorDataset(X, y), batch_size=4, num_workers=workers)))
            assert isinstance(xb.data, marked_backend.Marked)
            assert isinstance(yb.data, marked_backend.Marked)


# ---------------------------------------------------------------------------------------------
# Shuffling and determinism
# ---------------------------------------------------------------------------------------------
def test_same_seed_same_batches_and_epochs_differ():
    X, y = _xy(50)
    a = DataLoader(TensorDataset(X, y), batch_size=8, shuffle=True, seed=7)
    b = DataLoader(TensorDataset(X, y), batch_size=8, shuffle=True, seed=7)
    a0, a1 = _as_lists(a), _as_lists(a)
    b0, b1 = _as_lists(b), _as_lists(b)
    assert a0 == b0 and a1 == b1
    assert a0 != a1
    assert _as_lists(DataLoader(TensorDataset(X, y), 8, shuffle=True, seed=8)) != a0
    b.set_epoch(1)
    assert _as_lists(b) == a1
    assert b.epoch == 2


def test_seed_none_follows_manual_seed():
    ds = TensorDataset(np.arange(40))
    dt.manual_seed(123)
    loader = DataLoader(ds, 8, shuffle=True)
    first = [_as_lists(loader), _as_lists(loader)]            # epochs 0 and 1
    dt.manual_seed(123)
    loader = DataLoader(ds, 8, shuffle=True)
    second = [_as_lists(loader), _as_lists(loader)]
    assert first == second and first[0] != first[1]


def test_no_shuffle_does_not_consume_global_random_numbers():
    dt.manual_seed(5)
    DataLoader(TensorDataset(np.arange(4)), batch_size=2)
    after = dt.rand(3).numpy()
    dt.manual_seed(5)
    np.testing.assert_array_equal(after, dt.rand(3).numpy())


def test_shuffle_sees_every_sample_exactly_once():
    n = 103
    loader = DataLoader(TensorDataset(np.arange(n)), batch_size=10, shuffle=True, seed=0,
                        num_workers=2)
    for _ in range(3):
        seen = np.concatenate([b.numpy() for (b,) in loader])
        assert len(seen) == n
        assert sorted(seen.tolist()) == list(range(n))
        assert seen.tolist() != list(range(n))


def test_workers_give_identical_batches():
    X, y = _xy(97, 5)
    reference = DataLoader(TensorDataset(X, y), batch_size=8, shuffle=True, seed=3)
    threaded = DataLoader(TensorDataset(X, y), batch_size=8, shuffle=True, seed=3, num_workers=2)
    for _ in range(2):
        assert _as_lists(threaded) == _as_lists(reference)
    threaded3 = DataLoader(TensorDataset(X, y), batch_size=8, shuffle=True, seed=3, num_workers=3,
                           drop_last=True)
    reference3 = DataLoader(TensorDataset(X, y), batch_size=8, shuffle=True, seed=3, drop_last=True)
    assert _as_lists(threaded3) == _as_lists(reference3)


def test_more_workers_than_batches():
    loader = DataLoader(TensorDataset(np.arange(3)), batch_size=2, num_workers=4)
    assert _as_lists(loader) == [([0, 1],), ([2],)]


# ---------------------------------------------------------------------------------------------
# Generic datasets and collation
# ---------------------------------------------------------------------------------------------
class _Pairs(Dataset):
    def __init__(self, n: int = 10):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.full(3, i, dtype=np.float32), i


class _Dicts(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"image": np.full((2, 2), i, dtype=np.float32), "label": i % 2, "weight": 0.5,
                "pair": (i, float(i))}


def test_generic_dataset_tuples():
    batches = list(DataLoader(_Pairs(10), batch_size=4, shuffle=True, seed=1))
    assert [xb.shape for xb, _ in batches] == [(4, 3), (4, 3), (2, 3)]
    xb, yb = batches[0]
    assert xb.dtype == np.float32 and yb.dtype == np.int64
    np.testing.assert_array_equal(xb.numpy()[:, 0], yb.numpy())


def test_generic_dataset_dicts():
    batch = next(iter(DataLoader(_Dicts(), batch_size=5, num_workers=1)))
    assert set(batch) == {"image", "label", "weight", "pair"}
    assert batch["image"].shape == (5, 2, 2)
    assert batch["label"].dtype == np.int64
    assert batch["weight"].dtype == np.float32
    assert batch["pair"][0].dtype == np.int64 and batch["pair"][1].dtype == np.float32
    assert batch["label"].numpy().tolist() == [0, 1, 0, 1, 0]


def test_generic_matches_fast_path():
    X, y = _xy(23)
    fast = DataLoader(TensorDataset(X, y), batch_size=5, shuffle=True, seed=2)

    class Slow(Dataset):
        def __len__(self):
            return len(X)

        def __getitem__(self, i):
            return X[i], y[i]

    slow = DataLoader(Slow(), batch_size=5, shuffle=True, seed=2)
    assert _as_lists(fast) == _as_lists(slow)


def test_tensor_dataset_subclass_with_own_getitem_goes_sample_by_sample():
    class Doubled(TensorDataset):
        def __getitem__(self, i):
            x, = super().__getitem__(i)
            return (x * 2,)

    (xb,) = next(iter(DataLoader(Doubled(np.arange(4)), batch_size=4)))
    assert xb.numpy().tolist() == [0, 2, 4, 6]


def test_collate_errors_are_clear():
    with pytest.raises(ValueError, match="shapes differ"):
        default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(TypeError, match="different kinds"):
        default_collate([(1, 2), {"a": 1}])
    with pytest.raises(TypeError, match="type object"):
        default_collate([object(), object()])


def test_collate_fn_is_used():
    loader = DataLoader(_Pairs(4), batch_size=2, collate_fn=lambda samples: len(samples))
    assert list(loader) == [2, 2]


# ---------------------------------------------------------------------------------------------
# Worker threads: shutdown and errors
# ---------------------------------------------------------------------------------------------
def test_worker_threads_are_named_and_stop_after_an_epoch():
    loader = DataLoader(TensorDataset(np.arange(100)), batch_size=2, num_workers=2)
    it = iter(loader)
    next(it)
    names = sorted(t.name for t in _loader_threads())
    assert names == ["dltutor-loader-0", "dltutor-loader-1"]
    for _ in it:
        pass
    assert _wait_for_no_loader_threads() == []


def test_workers_stop_on_early_break():
    loader = DataLoader(TensorDataset(np.zeros((1000, 4))), batch_size=2, num_workers=2)
    for i, _ in enumerate(loader):
        if i == 3:
            break
    assert _wait_for_no_loader_threads() == []


def test_workers_stop_when_iterator_is_dropped_or_closed():
    loader = DataLoader(TensorDataset(np.zeros((1000, 4))), batch_size=2, num_workers=2)
    it = iter(loader)
    next(it)
    del it                                   # the last reference: the workers are told to stop
    assert _wait_for_no_loader_threads() == []
    it = iter(loader)
    next(it)
    it.close()
    assert _wait_for_no_loader_threads() == []
    with pytest.raises(StopIteration):
        next(it)


def test_prefetch_is_bounded():
    fetched = []

    class Counting(Dataset):
        def __len__(self):
            return 100

        def __getitem__(self, i):
            fetched.append(i)
            return i

    it = iter(DataLoader(Counting(), batch_size=1, num_workers=2, prefetch_factor=2))
    next(it)
    time.sleep(0.1)
    # consumed 1, at most 2 * 2 waiting in the queues, plus one batch per worker in hand
    assert len(fetched) <= 1 + 2 * 2 + 2
    it.close()


class _FailsOn37(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return self.read_sample(i)

    def read_sample(self, i):
        if i == 37:
            raise ValueError(f"corrupt sample {i}")
        return np.float32(i)


def test_worker_error_is_raised_in_main_thread_with_traceback():
    loader = DataLoader(_FailsOn37(), batch_size=8, num_workers=2)
    got = []
    with pytest.raises(DataLoaderWorkerError) as info:
        for xb in loader:
            got.append(xb)
    err = info.value
    assert len(got) == 4                       # batches 0-3 arrive first, in order
    assert err.batch == 4 and err.sample == 37
    assert err.worker == "dltutor-loader-0"
    assert isinstance(err.__cause__, ValueError)
    message = str(err)
    assert "batch 4" in message and "sample 37" in message
    assert "read_sample" in message and "corrupt sample 37" in message
    assert "Traceback" in message
    assert _wait_for_no_loader_threads() == []


def test_error_without_workers_is_the_original():
    with pytest.raises(ValueError, match="corrupt sample 37"):
        list(DataLoader(_FailsOn37(), batch_size=8))


# ---------------------------------------------------------------------------------------------
# Data sets
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [make_moons, make_circles])
def test_two_class_toy_sets(make):
    X, y = make(n=201, seed=0)
    assert X.shape == (201, 2) and X.dtype == np.float32
    assert y.shape == (201,) and y.dtype == np.int64
    assert sorted(np.bincount(y).tolist()) == [100, 101]
    X2, y2 = make(n=201, seed=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(make(n=201, seed=1)[0], X)


def test_spirals():
    X, y = make_spirals(n=301, arms=4, noise=0.2, seed=0)
    assert X.shape == (301, 2) and X.dtype == np.float32 and y.dtype == np.int64
    assert np.bincount(y).tolist() == [76, 75, 75, 75]
    assert np.abs(X).max() <= 1.0 + 1e-6
    np.testing.assert_array_equal(X, make_spirals(n=301, arms=4, noise=0.2, seed=0)[0])
    assert not np.array_equal(X, make_spirals(n=301, arms=4, noise=0.2, seed=1)[0])
    with pytest.raises(ValueError, match="arms"):
        make_spirals(n=10, arms=1)


def test_sine_regression():
    X, y = make_sine(n=100, noise=0.1, seed=0)
    assert X.shape == y.shape == (100, 1)
    assert X.dtype == y.dtype == np.float32
    assert X.min() >= -3 and X.max() < 3
    residual = y - np.sin(X)
    assert 0.05 < residual.std() < 0.15
    np.testing.assert_array_equal(y, make_sine(n=100, noise=0.1, seed=0)[1])


def test_tokens():
    X, y = make_tokens(n=400, vocab_size=20, seq_len=8, seed=0)
    assert X.shape == (400, 8) and X.dtype == np.int64 and y.dtype == np.int64
    assert X.min() >= 0 and X.max() < 20
    assert np.bincount(y).tolist() == [200, 200]
    g = 20 // 4
    pos = (X < g).sum(axis=1)
    neg = ((X >= g) & (X < 2 * g)).sum(axis=1)
    np.testing.assert_array_equal(pos > neg, y == 1)
    assert len(np.unique(X)) == 20                  # every token id is used
    np.testing.assert_array_equal(X, make_tokens(n=400, vocab_size=20, seq_len=8, seed=0)[0])
    assert not np.array_equal(X, make_tokens(n=400, vocab_size=20, seq_len=8, seed=1)[0])
    X1, y1 = make_tokens(n=5, vocab_size=4, seq_len=1, seed=0)   # the smallest case works
    assert X1.shape == (5, 1) and (X1[y1 == 1] < 1).all()


def test_tokens_are_learnable_from_bag_of_embeddings():
    # The label is a linear function of token counts: +1 per positive id, -1 per negative id.
    X, y = make_tokens(n=200, vocab_size=12, seq_len=6, seed=3)
    g = 12 // 4
    score = np.zeros(12)
    score[:g], score[g:2 * g] = 1.0, -1.0
    np.testing.assert_array_equal(score[X].sum(axis=1) > 0, y == 1)


def test_digits():
    X, y = load_digits()
    assert X.shape == (1797, 64) and X.dtype == np.float32
    assert y.shape == (1797,) and y.dtype == np.int64
    assert X.min() == 0.0 and X.max() == 1.0
    counts = np.bincount(y)
    assert len(counts) == 10 and counts.min() >= 170 and counts.max() <= 190
    images, y2 = load_digits(images=True)
    assert images.shape == (1797, 1, 8, 8)
    np.testing.assert_array_equal(images.reshape(1797, 64), X)
    np.testing.assert_array_equal(y, y2)
    X[0, 0] = 99                                    # a caller's copy, not the cache
    assert load_digits()[0][0, 0] != 99


def test_datasets_feed_a_loader():
    X, y = make_moons(n=64, seed=0)
    xb, yb = next(iter(DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True, seed=0)))
    assert xb.shape == (16, 2) and xb.dtype == np.float32 and yb.dtype == np.int64
