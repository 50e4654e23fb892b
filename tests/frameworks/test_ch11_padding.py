"""Chapter 11, variable-length ids: `padding_idx` and `ignore_index`, run in PyTorch and Paddle.

The chapter masks the padding of a batch of id sequences by hand, then says that both halves are
built in: ``nn.Embedding(vocab, dim, padding_idx=0)`` starts the padding row at zero and never
gives it a gradient (dltutor, PyTorch, Paddle), and ``F.cross_entropy(logits, labels,
ignore_index=-100)`` (-100 the default) leaves the places with that label out of the loss. In
dltutor and PyTorch the mean is then over the other places, as the hand-made mask's. Paddle 3.3
averages over the other places only for an ``ignore_index`` of 0 or more; with a negative one,
its default -100 included, the ignored places add 0 to the sum but still count in the mean.
Each test runs the chapter's batch, from the same float64 weights, in the framework and in dltutor.
"""
from __future__ import annotations

import inspect

import numpy as np
import torch

import dltutor as dt
from claims import claim
from dltutor import nn
from dltutor.nn import functional as F

PAD, VOCAB, DIM, CLASSES = 0, 20, 8, 5
IDS = np.array([[5, 3, 8, 0, 0], [7, 0, 0, 0, 0], [2, 9, 4, 6, 1]])    # the chapter's batch
MASK = IDS != PAD
LABELS = np.where(MASK, IDS % CLASSES, -100)                             # -100 on the padding


def weights():
    """One table and one head, in float64, shared by every framework of a test."""
    rng = np.random.default_rng(0)
    table = rng.normal(size=(VOCAB, DIM))
    table[PAD] = 0.0
    return table, rng.normal(size=(CLASSES, DIM)), rng.normal(size=CLASSES)


def hand_masked(table, head_w, head_b):
    """The chapter's way: per-place losses times the mask, over the number of real ids."""
    logits = table[IDS] @ head_w.T + head_b
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    per_place = -np.take_along_axis(log_p, (IDS % CLASSES)[..., None], -1)[..., 0]
    return (per_place * MASK).sum() / MASK.sum()


def dltutor_result(table, head_w, head_b):
    """Loss and table gradient of the built-in way in dltutor."""
    emb = nn.Embedding(VOCAB, DIM, padding_idx=PAD).double()
    head = nn.Linear(DIM, CLASSES).double()
    for param, value in ((emb.weight, table), (head.weight, head_w), (head.bias, head_b)):
        param.data[...] = value
    loss = F.cross_entropy(head(emb(dt.tensor(IDS))).reshape(-1, CLASSES),
                           dt.tensor(LABELS.reshape(-1)), ignore_index=-100)
    loss.backward()
    return loss.item(), emb.weight.grad.numpy()


@claim("torch-gpu-padding-idx-ignore-index")
def test_torch_padding_idx_and_ignore_index_mask_the_padding():
    assert inspect.signature(torch.nn.functional.cross_entropy).parameters[
        "ignore_index"].default == -100
    torch.manual_seed(0)
    fresh = torch.nn.Embedding(VOCAB, DIM, padding_idx=PAD)
    assert torch.all(fresh.weight[PAD] == 0), "the padding row starts at zero"

    table, head_w, head_b = weights()
    emb = torch.nn.Embedding(VOCAB, DIM, padding_idx=PAD).double()
    head = torch.nn.Linear(DIM, CLASSES).double()
    with torch.no_grad():
        emb.weight.copy_(torch.tensor(table))
        head.weight.copy_(torch.tensor(head_w))
        head.bias.copy_(torch.tensor(head_b))
    logits = head(emb(torch.tensor(IDS))).reshape(-1, CLASSES)
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor(LABELS.reshape(-1)),
                                             ignore_index=-100)
    loss.backward()
    grad = emb.weight.grad.numpy()
    assert np.all(grad[PAD] == 0), "the padding row never gets a gradient"
    assert np.abs(grad[5]).max() > 0
    assert np.isclose(loss.item(), hand_masked(table, head_w, head_b), rtol=1e-12), \
        "the mean is over the places that are not ignored"
    kit_loss, kit_grad = dltutor_result(table, head_w, head_b)
    assert np.isclose(kit_loss, loss.item(), rtol=1e-12) and np.allclose(kit_grad, grad, atol=1e-12)


@claim("paddle-gpu-padding-idx-ignore-index")
def test_paddle_padding_idx_and_where_its_ignore_index_mean_differs(paddle):
    assert inspect.signature(paddle.nn.functional.cross_entropy).parameters[
        "ignore_index"].default == -100
    fresh = paddle.nn.Embedding(VOCAB, DIM, padding_idx=PAD)
    assert np.all(fresh.weight.numpy()[PAD] == 0), "the padding row starts at zero"

    table, head_w, head_b = weights()
    masked = hand_masked(table, head_w, head_b)
    kit_loss, kit_grad = dltutor_result(table, head_w, head_b)

    def run(ignore_index):
        """Loss and table gradient with the padding labelled `ignore_index`."""
        emb = paddle.nn.Embedding(VOCAB, DIM, padding_idx=PAD)
        head = paddle.nn.Linear(DIM, CLASSES)                # Paddle's weight is (in, out)
        emb.to(dtype="float64")
        head.to(dtype="float64")
        emb.weight.set_value(table)
        head.weight.set_value(head_w.T.copy())
        head.bias.set_value(head_b)
        labels = np.where(MASK, IDS % CLASSES, ignore_index).reshape(-1)
        logits = head(emb(paddle.to_tensor(IDS))).reshape([-1, CLASSES])
        loss = paddle.nn.functional.cross_entropy(logits, paddle.to_tensor(labels),
                                                  ignore_index=ignore_index)
        loss.backward()
        return float(loss), emb.weight.grad.numpy()

    real, places = MASK.sum(), MASK.size                     # 9 real ids among 15 places
    loss, grad = run(-100)                                   # the default: a negative index
    assert np.all(grad[PAD] == 0), "the padding row never gets a gradient"
    assert np.isclose(loss, masked * real / places, rtol=1e-12), "the mean counts every place"
    assert np.allclose(grad, kit_grad * real / places, atol=1e-12)
    loss, grad = run(CLASSES)                                # an index of 0 or more (5: no class)
    assert np.all(grad[PAD] == 0)
    assert np.isclose(loss, masked, rtol=1e-12) and np.isclose(kit_loss, masked, rtol=1e-12), \
        "the mean is over the places that are not ignored"
    assert np.allclose(grad, kit_grad, atol=1e-12)
