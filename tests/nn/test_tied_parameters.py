"""One parameter tied across two different modules (an embedding and an output head, as in
GPT-2): one parameter with two names, one gradient, one update, a tie that loading keeps."""
from __future__ import annotations

import numpy as np

import dltutor as dt
from dltutor.nn import functional as F
from dltutor import backend as B
from dltutor import nn, optim
from gradcheck import gradcheck


def on_backend(array, requires_grad=False):
    return dt.tensor(B.current().asarray(np.asarray(array, dtype=np.float64)),
                     requires_grad=requires_grad)


# --- one parameter tied across two different modules -----------------------------------------
VOCAB, DIM = 6, 4


class TiedLM(nn.Module):
    """An embedding and an output head that share one (VOCAB, DIM) weight, as in GPT-2."""

    def __init__(self, tie=True):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        if tie:
            self.head.weight = self.embed.weight

    def forward(self, idx):
        return self.head(dt.tanh(self.embed(idx)))


IDX = [[0, 2, 5], [5, 2, 1]]
TARGETS = [1, 3, 0, 2, 2, 5]


def lm_loss(model):
    logits = model(dt.tensor(IDX))
    return F.cross_entropy(logits.reshape(-1, VOCAB), dt.tensor(TARGETS))


def test_tied_weight_is_one_parameter_with_two_names():
    """Listed once by parameters(), under both names in state_dict() (one memory)."""
    dt.manual_seed(0)
    model = TiedLM()
    assert model.head.weight is model.embed.weight
    assert len(list(model.parameters())) == 1
    assert [n for n, _ in model.named_parameters()] == ["embed.weight"]
    assert [n for n, _ in model.named_parameters(remove_duplicate=False)] == ["embed.weight",
                                                                              "head.weight"]
    state = model.state_dict()
    assert sorted(state) == ["embed.weight", "head.weight"]
    assert np.shares_memory(state["embed.weight"].data, state["head.weight"].data)


def test_tied_weight_gradient_is_the_sum_of_both_uses():
    """The shared weight's gradient equals the embedding's plus the head's gradient in the
    same model with the two weights untied (but equal)."""
    dt.manual_seed(0)
    tied = TiedLM()
    lm_loss(tied).backward()
    untied = TiedLM(tie=False)
    untied.embed.weight.set_value(tied.embed.weight.numpy())
    untied.head.weight.set_value(tied.embed.weight.numpy())
    lm_loss(untied).backward()
    both = untied.embed.weight.grad.numpy() + untied.head.weight.grad.numpy()
    assert np.abs(untied.embed.weight.grad.numpy()).max() > 0.01   # both uses contribute
    assert np.abs(untied.head.weight.grad.numpy()).max() > 0.01
    np.testing.assert_allclose(tied.embed.weight.grad.numpy(), both, rtol=1e-5, atol=1e-7)


def test_weight_used_as_embedding_and_output_head_matches_finite_differences(backend):
    """The same tie, functionally and in float64: w looks tokens up and then scores them."""
    def tied_forward(w):
        idx = dt.tensor(B.current().asarray(np.array(IDX)))
        return dt.linear(dt.tanh(F.embedding(idx, w)), w)

    gradcheck(tied_forward, np.random.default_rng(8).standard_normal((VOCAB, DIM)))


def test_an_optimizer_step_updates_the_tied_weight_once():
    """One SGD step moves the shared weight by lr * (summed gradient), not twice that."""
    dt.manual_seed(0)
    model = TiedLM()
    opt = optim.SGD(model.named_parameters(), lr=0.1)
    lm_loss(model).backward()
    before = model.embed.weight.numpy().copy()
    grad = model.embed.weight.grad.numpy().copy()
    opt.step()
    np.testing.assert_allclose(model.embed.weight.numpy(), before - 0.1 * grad, rtol=1e-6,
                               atol=1e-7)
    assert model.head.weight is model.embed.weight


def test_load_state_dict_keeps_the_tie_across_modules():
    """Loading another tied model's state keeps one object under both names; loading only one
    name (strict=False) changes what the other name sees too."""
    dt.manual_seed(0)
    model, other = TiedLM(), TiedLM()
    weight = model.embed.weight
    model.load_state_dict(other.state_dict())
    assert model.embed.weight is weight and model.head.weight is weight
    np.testing.assert_array_equal(weight.numpy(), other.embed.weight.numpy())

    new = np.arange(VOCAB * DIM, dtype=np.float32).reshape(VOCAB, DIM)
    result = model.load_state_dict({"embed.weight": new}, strict=False)
    assert result.missing_keys == ["head.weight"]
    assert model.head.weight is model.embed.weight
    np.testing.assert_array_equal(model.head.weight.numpy(), new)
    lm_loss(model).backward()                    # still one parameter, one gradient
    assert model.head.weight.grad is model.embed.weight.grad
