"""What README.md says about PyTorch's data-parallel names, run in PyTorch: dltutor.distributed
uses torch.distributed's spellings, and DistributedSampler shares the data out by PyTorch's
rule (same shares in order without shuffling; the shuffled order is each kit's own)."""
from __future__ import annotations

import inspect

import numpy as np
import torch
import torch.distributed as tdist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

import dltutor.distributed as dist

from claims import claim, row


@claim("torch-distributed-names")
def test_the_kits_distributed_names_are_torch_distributeds():
    for name in ("init_process_group", "destroy_process_group", "is_initialized", "get_rank",
                 "get_world_size", "barrier", "all_reduce", "broadcast", "all_gather"):
        assert callable(getattr(tdist, name)) and callable(getattr(dist, name)), name
    # the two names the NCCL engine added: the same spelling and parameters as PyTorch's
    assert callable(tdist.get_backend) and callable(dist.get_backend)
    assert (tuple(inspect.signature(dist.gather_object).parameters)
            == tuple(inspect.signature(tdist.gather_object).parameters)[:3]
            == ("obj", "object_gather_list", "dst"))
    assert tdist.Backend.NCCL == "nccl" and tdist.Backend.MPI == "mpi"    # the kit's two names
    from dltutor.distributed.process_group import BACKENDS
    assert BACKENDS == ("mpi", "nccl")
    for op in ("SUM", "AVG", "MAX", "MIN", "PRODUCT"):
        assert hasattr(tdist.ReduceOp, op) and hasattr(dist.ReduceOp, op), op
    ours = inspect.signature(dist.DistributedDataParallel).parameters
    theirs = inspect.signature(DistributedDataParallel).parameters
    for option in ("find_unused_parameters", "broadcast_buffers"):
        assert option in ours and option in theirs, option
    assert callable(DistributedDataParallel.no_sync) and callable(dist.DistributedDataParallel.no_sync)
    assert hasattr(torch.Tensor, "register_post_accumulate_grad_hook")
    sampler_options = ("num_replicas", "rank", "shuffle", "seed", "drop_last")
    for cls in (DistributedSampler, dist.DistributedSampler):
        assert tuple(inspect.signature(cls).parameters)[1:] == sampler_options, cls
        assert callable(cls.set_epoch)


@row("torch-names-13", "each process its share of the data",
     "`torch.utils.data.distributed.DistributedSampler(dataset)`")
@claim("torch-distributed-names")
def test_the_sampler_shares_the_data_as_pytorchs_does():
    for n, replicas in ((10, 4), (7, 3), (8, 2), (3, 4)):
        for drop_last in (False, True):
            for rank in range(replicas):
                theirs = DistributedSampler(range(n), replicas, rank, shuffle=False,
                                            drop_last=drop_last)
                ours = dist.DistributedSampler(np.arange(n), replicas, rank, shuffle=False,
                                               drop_last=drop_last)
                assert list(ours) == list(theirs) and len(ours) == len(theirs), (n, replicas)
