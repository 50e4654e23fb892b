"""The batches a ``DataLoader(drop_last=True)`` really yields when iterated."""
from __future__ import annotations

import numpy as np
import pytest

from dltutor.data import DataLoader, TensorDataset


# --- DataLoader(drop_last=True): the batches actually yielded ----------------------------------
def yielded_sizes(loader):
    """The size of every batch a full pass yields, counted by iterating (never len())."""
    return [xb.shape[0] for xb, _ in loader]


def dataset(n):
    return TensorDataset(np.arange(n, dtype=np.float32).reshape(n, 1), np.arange(n) % 3)


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("n,batch_size,dropped,kept", [
    (10, 4, [4, 4], [4, 4, 2]),
    (12, 4, [4, 4, 4], [4, 4, 4]),
    (9, 2, [2, 2, 2, 2], [2, 2, 2, 2, 1]),
    (5, 5, [5], [5]),
    (7, 1, [1] * 7, [1] * 7),
])
def test_drop_last_yields_only_full_batches(n, batch_size, dropped, kept, shuffle, num_workers):
    """With drop_last=True every yielded batch is full and the short tail is not yielded;
    without it the tail comes last. Shuffled or not, threaded or not."""
    kwargs = dict(batch_size=batch_size, shuffle=shuffle, seed=3, num_workers=num_workers)
    assert yielded_sizes(DataLoader(dataset(n), drop_last=True, **kwargs)) == dropped
    assert yielded_sizes(DataLoader(dataset(n), drop_last=False, **kwargs)) == kept


@pytest.mark.parametrize("shuffle", [False, True])
def test_drop_last_yields_distinct_samples_and_drops_only_the_tail(shuffle):
    """The full batches hold n - n % batch_size distinct samples; what is dropped is the tail
    of the epoch's order, and every epoch yields the same number of batches."""
    loader = DataLoader(dataset(10), batch_size=4, shuffle=shuffle, seed=5, drop_last=True)
    for epoch in range(3):
        order = loader.order()
        seen = [int(v) for xb, _ in loader for v in xb.numpy().ravel()]
        assert len(seen) == 8 and len(set(seen)) == 8
        assert seen == order[:8].tolist(), f"epoch {epoch}"


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize("shuffle", [False, True])
def test_a_data_set_smaller_than_one_batch(shuffle, num_workers):
    """Fewer samples than batch_size: nothing at all with drop_last, one short batch without."""
    kwargs = dict(batch_size=8, shuffle=shuffle, seed=1, num_workers=num_workers)
    assert yielded_sizes(DataLoader(dataset(5), drop_last=True, **kwargs)) == []
    assert yielded_sizes(DataLoader(dataset(5), drop_last=False, **kwargs)) == [5]
    batches = list(DataLoader(dataset(5), drop_last=False, **kwargs))
    assert sorted(batches[0][0].numpy().ravel().tolist()) == [0, 1, 2, 3, 4]


def test_a_sampler_decides_the_order_and_the_length():
    ds = TensorDataset(np.arange(10))
    loader = DataLoader(ds, batch_size=2, sampler=[9, 7, 5])
    assert [xb.tolist() for (xb,) in loader] == [[9, 7], [5]] and len(loader) == 2
    with pytest.raises(ValueError, match="shuffle must be False"):
        DataLoader(ds, batch_size=2, shuffle=True, sampler=[1, 2])
