"""Shared set-up of the benchmark workloads: the seed, the dtype, the initial weights and data
(identical for the dltutor and the NumPy side) and the optimizer row's settings.
"""
# Pins BLAS to one thread and puts the repository root on sys.path; it must come before
# NumPy is imported (anywhere), so it is the first import.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import numpy as np


SEED = 0
DTYPE = np.float32


# =============================================================================================
# Initial weights and data (identical for both sides)
# =============================================================================================
def uniform_init(rng: np.random.Generator, shape: tuple, fan_in: int) -> np.ndarray:
    """PyTorch's default layer init: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(DTYPE)


def mlp_params(rng: np.random.Generator, sizes: list[int]) -> list[np.ndarray]:
    """[W1, b1, W2, b2, ...] for the layer sizes ``sizes``; W is (out, in) as in PyTorch."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append(uniform_init(rng, (fan_out, fan_in), fan_in))
        params.append(uniform_init(rng, (fan_out,), fan_in))
    return params


def lenet_params(rng: np.random.Generator) -> list[np.ndarray]:
    """conv 1->6 5x5, conv 6->16 5x5, then fully connected 256 -> 120 -> 84 -> 10."""
    params = []
    for out_ch, in_ch in ((6, 1), (16, 6)):
        fan_in = in_ch * 5 * 5
        params.append(uniform_init(rng, (out_ch, in_ch, 5, 5), fan_in))
        params.append(uniform_init(rng, (out_ch,), fan_in))
    return params + mlp_params(rng, [16 * 4 * 4, 120, 84, 10])


def classification_batch(rng: np.random.Generator, shape: tuple, classes: int) -> tuple:
    """Random float32 inputs and random int64 labels."""
    x = rng.standard_normal(shape).astype(DTYPE)
    labels = rng.integers(0, classes, size=shape[0], dtype=np.int64)
    return x, labels


# The optimizer row's settings (optimizer_bench.py), shared by both sides.
OPT_SIZES = [784, 256, 256, 10]
OPT_GROUP_LRS = [1e-3, 5e-4, 2e-3]           # one group per layer
OPT_LR_MULTS = [1.0, 0.5, 1.0, 1.0, 2.0, 1.0]  # per parameter: w0 b0 w1 b1 w2 b2
OPT_L2 = 1e-4                                  # a parameter L2Decay on every weight
OPT_CLIP = 1.0                                 # global-norm clipping
