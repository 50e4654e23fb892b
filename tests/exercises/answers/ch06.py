"""Chapter 06's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them)."""
from __future__ import annotations

from dltutor import optim
from dltutor.examples import make_net

PADDLE_WEIGHTS = {"conv2d_0.w_0", "conv2d_1.w_0", "linear_0.w_0", "linear_1.w_0"}


def fc2_optimizer(fc2_lr, other_lr, leave_out=()):
    """An SGD over a fresh LeNet: fc2 at ``fc2_lr``, the rest at ``other_lr``."""
    net = make_net()
    fc2 = {id(p) for p in net.fc2.parameters()}
    rest = [(n, p) for n, p in net.named_parameters() if id(p) not in fc2 and n not in leave_out]
    return optim.SGD([{"params": rest, "lr": other_lr},
                      {"params": net.fc2.named_parameters(prefix="fc2"), "lr": fc2_lr}], lr=0.05)


CASES = {
    "06.1": ({"moves": False, "gets_gradient": True},
             [({"moves": True, "gets_gradient": True}, ["does not move"]),
              ({"moves": False, "gets_gradient": False}, ["still computes"])]),
    "06.2": ({"decay_names": PADDLE_WEIGHTS},
             [({"decay_names": {"conv1.weight", "conv2.weight", "fc1.weight", "fc2.weight"}},
               ["generated names"]),
              ({"decay_names": PADDLE_WEIGHTS | {"linear_1.b_0"}}, ["bias names"]),
              ({"decay_names": {"linear_0.w_0"}}, ["missing"])]),
    "06.3": ({"fc2_opt": fc2_optimizer(0.001, 0.05)},
             [({"fc2_opt": fc2_optimizer(0.05, 0.001)}, ["swapped"]),
              ({"fc2_opt": fc2_optimizer(0.001, 0.05, leave_out=("conv1.bias",))},
               ["all eight"]),
              ({"fc2_opt": fc2_optimizer(0.01, 0.05)}, ["fc2.weight and fc2.bias"])]),
}

SELF_CONTAINED: set = set()
