"""DistributedSampler: each process's share of a data set, a different one in each process.

With N processes each epoch's order (shuffled by ``seed`` and the epoch) is padded by repeating
its first indices until it divides by N (or cut, with ``drop_last``), and process ``rank`` takes
every N-th index starting at ``rank``: the shares are disjoint and equally long, as in PyTorch.
Call ``set_epoch(epoch)`` before each epoch, or every epoch has the same order.

>>> import numpy as np
>>> data = np.arange(10)
>>> [list(DistributedSampler(data, num_replicas=4, rank=r, shuffle=False)) for r in range(4)]
[[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
>>> len(DistributedSampler(data, num_replicas=4, rank=0, drop_last=True))
2
"""
from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

from .process_group import get_rank, get_world_size


class DistributedSampler:
    """The indices of ``dataset`` that process ``rank`` of ``num_replicas`` visits in an epoch
    (by default the process's own rank and the group's size). Give it to
    ``DataLoader(dataset, batch_size, sampler=...)``."""

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False):
        num_replicas = get_world_size() if num_replicas is None else int(num_replicas)
        rank = get_rank() if rank is None else int(rank)
        if num_replicas < 1 or not 0 <= rank < num_replicas:
            raise ValueError(f"DistributedSampler: rank must be in 0..num_replicas-1, got "
                             f"rank={rank}, num_replicas={num_replicas}")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last = bool(shuffle), int(seed), bool(drop_last)
        self.epoch = 0
        n = len(dataset)
        if self.drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def set_epoch(self, epoch: int) -> None:
        """Use epoch ``epoch``'s order next (every process must call it with the same epoch)."""
        self.epoch = int(epoch)

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        order = (np.random.default_rng([self.seed, self.epoch]).permutation(n) if self.shuffle
                 else np.arange(n))
        if self.drop_last:
            order = order[:self.total_size]
        elif self.total_size > n:            # pad with the first indices, again if needed
            order = np.resize(order, self.total_size)
        return iter(order[self.rank:self.total_size:self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.num_samples

    def __repr__(self) -> str:
        return (f"DistributedSampler(rank {self.rank} of {self.num_replicas}, "
                f"{self.num_samples} samples an epoch, shuffle={self.shuffle}, seed={self.seed})")
