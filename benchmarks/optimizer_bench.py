"""``optimizer.step()`` alone, with every per-parameter feature on (groups, lr_mult, L2Decay,
global-norm clipping), against the same arithmetic in NumPy (``numpy_optimizer_step``).
"""
# Pins BLAS to one thread and puts the repository root on sys.path; it must come before
# NumPy is imported (anywhere), so it is the first import.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import numpy as np

import dltutor as dt
from dltutor import optim

from data_setup import DTYPE, OPT_CLIP, OPT_GROUP_LRS, OPT_L2, OPT_LR_MULTS, OPT_SIZES, SEED, \
    mlp_params
from numpy_side import numpy_optimizer_step
from timing import Result, median_seconds


# =============================================================================================
# Optimizer steps with every per-parameter feature on, against the same arithmetic in NumPy
# =============================================================================================
def dltutor_optimizer(params: list, kind: str) -> optim.Optimizer:
    """Three groups (one per layer), lr multipliers, L2Decay on the weights, global-norm clip."""
    for p, mult in zip(params, OPT_LR_MULTS):
        p.lr_mult = mult
        p.regularizer = optim.L2Decay(OPT_L2) if p.ndim == 2 else None
    groups = [{"params": params[2 * i:2 * i + 2], "lr": lr} for i, lr in enumerate(OPT_GROUP_LRS)]
    clip = optim.ClipGradByGlobalNorm(OPT_CLIP)
    if kind == "adam":
        return optim.Adam(groups, grad_clip=clip)
    return optim.SGD(groups, lr=OPT_GROUP_LRS[0], momentum=0.9, grad_clip=clip)


def optimizer_results(repeats: int) -> list[Result]:
    """Time optimizer.step() alone; the gradients are fixed arrays, identical for both sides."""
    rng = np.random.default_rng(SEED)
    init = mlp_params(rng, OPT_SIZES)
    grads = [rng.standard_normal(p.shape).astype(DTYPE) * 0.1 for p in init]
    return [optimizer_result(kind, label, init, grads, repeats)
            for kind, label in (("adam", "Adam"), ("sgd", "SGD momentum 0.9"))]


def optimizer_result(kind: str, label: str, init: list, grads: list, repeats: int) -> Result:
    """One optimizer's row: both sides start from ``init`` and step with ``grads``; each
    timed step starts again from ``init`` with a fresh optimizer (reset_ours, reset_theirs)."""
    from dltutor import nn

    params = [nn.Parameter(p.copy()) for p in init]
    for p, g in zip(params, grads):
        p.grad = dt.tensor(g)
    ours = {"opt": dltutor_optimizer(params, kind)}
    theirs = {"params": [p.copy() for p in init], "state": {}}

    def reset_ours() -> None:
        for p, p0 in zip(params, init):
            np.copyto(p.data, p0)
        ours["opt"] = dltutor_optimizer(params, kind)

    def reset_theirs() -> None:
        for p, p0 in zip(theirs["params"], init):
            np.copyto(p, p0)
        theirs["state"] = {}

    def step_theirs() -> None:
        numpy_optimizer_step(theirs["params"], grads, theirs["state"], kind)

    for _ in range(5):           # same arithmetic: the two sides must agree
        ours["opt"].step()
        step_theirs()
    for p, q in zip(params, theirs["params"]):
        np.testing.assert_allclose(p.data, q, rtol=1e-5, atol=1e-7,
                                   err_msg=f"optimizer row {label}: the sides disagree")
    t_ours, t_theirs = (seconds * 1e6 for seconds in median_seconds(
        [(lambda: ours["opt"].step(), reset_ours), (step_theirs, reset_theirs)], repeats))
    return Result(
        f"optimizer step, 784-256-256-10 MLP, {label}: 3 groups, lr_mult, L2Decay, "
        "global-norm clip", t_ours, t_theirs, "step", "<= 1.3", t_ours / t_theirs <= 1.3)
