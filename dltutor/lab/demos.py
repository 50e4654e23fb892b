"""Ready-made labs: each function returns a configured :class:`TrainingLab`.

* :func:`moons_mlp`: a small MLP on the two-moons data; the lab to start with.
* :func:`spirals_mlp`: three spiral arms and a narrow first layer, whose lr multiplier decides
  how fast (or whether) the network untangles them.
* :func:`exploding_gradients`: a deep ReLU network started too large: without clipping its loss
  overflows within a few steps, with global-norm clipping it learns.
* :func:`tied_mlp`: an MLP that uses one hidden layer twice (a tied layer).
* :func:`digits_mlp`: an MLP on the 8x8 handwritten digits.
* :func:`pretrained_features`: layers pretrained to read digits, a new head learning odd vs
  even: freezing the pretrained layers keeps what they knew, training them erases it.

A demo's title and what it watches are in the kit's language when the demo is made.

Every effect a demo is meant to show holds for every seed, not just the default one
(``tests/lab/test_demos.py`` checks each over several seeds). Each demo also sets the threshold
the view's clip slider starts at (``lab.clip_default``): one below the gradient norm of most of
its steps, so that switching clipping on clips, visibly, in every demo.

>>> lab = exploding_gradients()
>>> lab.run(100)                     # without clipping: the loss overflows, the lab stops
False
>>> lab.steps_done < 10
True
"""
from __future__ import annotations

import math

from .. import checks, data, nn, optim
from ..autograd.rng import manual_seed
from ..i18n import text
from ..nn import functional as F
from ..nn import init
from .controller import TrainingLab
from .parts import accuracy


def _check_args(demo: str, seed: int, lr: float, **sizes: int) -> None:
    """Refuse a bad argument before the demo seeds the global generator or builds anything:
    ``seed`` an integer >= 0, ``lr`` a finite number >= 0, each of ``sizes`` an integer >= 1
    (``depth`` >= 0: no hidden layer at all is still a network)."""
    owner = f"demos.{demo}"
    checks.integer(owner, "seed", seed, minimum=0)
    checks.non_negative(owner, "lr", lr)
    for name, value in sizes.items():
        checks.integer(owner, name, value, minimum=0 if name == "depth" else 1)


def moons_mlp(seed: int = 0, hidden: int = 16, lr: float = 0.1, batch_size: int = 32) -> TrainingLab:
    """A 2-16-16-2 ReLU network learning the two moons with SGD and momentum.

    >>> lab = moons_mlp()
    >>> lab.run(200)
    True
    >>> lab.accuracy() > 0.85
    True
    """
    _check_args("moons_mlp", seed, lr, hidden=hidden, batch_size=batch_size)
    manual_seed(seed)
    X, y = data.make_moons(n=256, noise=0.15, seed=seed)
    model = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 2))
    opt = optim.SGD(model.named_parameters(), lr=lr, momentum=0.9)
    # 90 to 140 steps to 97 % accuracy: at 3 steps/s the boundary forms in 30 to 45 s. Its
    # global gradient norm is 0.1 to 1 most of the way: clipped at 0.3, about half the steps
    # (40-70 % of the first 300) are cut to the threshold.
    return TrainingLab(model, opt, F.cross_entropy, (X, y), batch_size=batch_size, seed=seed,
                       name="moons MLP", title=text("lab.title.moons_mlp"), pace=3,
                       clip_default=0.3)


def exploding_gradients(seed: int = 0, depth: int = 6, width: int = 32, gain: float = 2.0,
                        lr: float = 0.05) -> TrainingLab:
    """A deep ReLU network whose weights start ``gain`` times too large: its gradients explode.

    Each hidden layer's weights are drawn with ``gain`` times Kaiming's standard deviation
    ``sqrt(2 / fan_in)``, so the signal doubles at every one of the ``depth`` layers and the
    first gradients are about a hundred times larger than a healthy network's. SGD (momentum
    0.9), sized for healthy gradients, takes a first step that makes the weights larger still:
    the loss overflows within about five steps and the lab stops with an error. With
    ``lab.set_clip("global_norm", 1.0)`` no step can be longer than ``lr`` times the threshold
    (times about 10 with momentum); the clip scale sits far below 1 for the first few dozen
    steps, then the gradients fall under the threshold and the network learns the moons.
    It trains on the whole set (256 points) at every step.

    >>> lab = exploding_gradients()
    >>> lab.set_clip("global_norm", 1.0)
    >>> lab.run(300)
    True
    >>> lab.accuracy() > 0.95
    True
    """
    _check_args("exploding_gradients", seed, lr, depth=depth, width=width)
    checks.positive("demos.exploding_gradients", "gain", gain)
    manual_seed(seed)
    X, y = data.make_moons(n=256, noise=0.15, seed=seed)
    layers: list[nn.Module] = []
    size = 2
    for _ in range(depth):
        linear = nn.Linear(size, width)
        init.normal_(linear.weight, std=gain * math.sqrt(2 / size))   # Kaiming's std, x gain
        init.zeros_(linear.bias)
        layers += [linear, nn.ReLU()]
        size = width
    layers.append(nn.Linear(size, 2))
    model = nn.Sequential(*layers)
    opt = optim.SGD(model.named_parameters(), lr=lr, momentum=0.9)
    return TrainingLab(model, opt, F.cross_entropy, (X, y), batch_size=None, seed=seed,
                       name="exploding gradients", title=text("lab.title.exploding_gradients"),
                       pace=2, clip_default=1.0)          # clipped: 60-90 steps to 95 %


def tied_mlp(seed: int = 0, hidden: int = 16, lr: float = 0.1) -> TrainingLab:
    """An MLP whose hidden layer is used twice; freezing it freezes both uses.

    >>> lab = tied_mlp()
    >>> lab.layers            # the tied layer is one layer
    ['0', '2', '6']
    """
    _check_args("tied_mlp", seed, lr, hidden=hidden)
    manual_seed(seed)
    X, y = data.make_moons(n=256, noise=0.15, seed=seed)
    shared = nn.Linear(hidden, hidden)
    model = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(),
                          nn.Linear(hidden, 2))
    opt = optim.SGD(model.named_parameters(), lr=lr, momentum=0.9)
    return TrainingLab(model, opt, F.cross_entropy, (X, y), batch_size=32, seed=seed,
                       name="tied MLP", title=text("lab.title.tied_mlp"),
                       pace=4, clip_default=0.3)          # 75-280 steps to 97 %


def digits_mlp(seed: int = 0, hidden: int = 64, lr: float = 1e-3) -> TrainingLab:
    """A 64-64-10 MLP on scikit-learn's 8x8 digits, trained with Adam.

    >>> lab = digits_mlp()
    >>> lab.run(100)
    True
    >>> lab.accuracy() > 0.8
    True
    """
    _check_args("digits_mlp", seed, lr, hidden=hidden)
    manual_seed(seed)
    X, y = data.load_digits()
    model = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))
    opt = optim.Adam(model.named_parameters(), lr=lr)
    # Its gradient norm stays at 0.3 to 0.9, so 0.3 clips almost every step; Adam divides each
    # step by the gradient's own size, which is why clipping hardly slows it.
    return TrainingLab(model, opt, F.cross_entropy, (X, y), batch_size=64, seed=seed,
                       name="digits MLP", title=text("lab.title.digits_mlp"),
                       pace=10, clip_default=0.3)         # 370-450 steps to 95 %


def spirals_mlp(seed: int = 0, hidden: int = 12, lr: float = 0.1) -> TrainingLab:
    """A 2-12-12-3 ReLU network learning three spiral arms with plain SGD (no momentum).

    The first layer is narrow and learns slowest, so its lr multiplier decides the run: at
    ``lab.set_lr_mult("0", 10)`` the network reaches 90 % accuracy in well under the steps it
    needs at 1, and at 0 (a fixed random first layer) it stalls far below the others.

    >>> lab = spirals_mlp()
    >>> lab.layers
    ['0', '2', '4']
    """
    _check_args("spirals_mlp", seed, lr, hidden=hidden)
    manual_seed(seed)
    X, y = data.make_spirals(n=300, arms=3, noise=0.1, seed=seed)
    model = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 3))
    opt = optim.SGD(model.named_parameters(), lr=lr)
    # 700-1150 steps to 90 % at lr x 1 (seeds 0-9): at 30 steps/s, 23 to 38 s.
    return TrainingLab(model, opt, F.cross_entropy, (X, y), batch_size=32, seed=seed,
                       name="spirals MLP", title=text("lab.title.spirals_mlp"), pace=30,
                       clip_default=0.3)


def pretrained_features(seed: int = 0, lr: float = 0.1, pretrain_steps: int = 400) -> TrainingLab:
    """Transfer learning in miniature: a feature extractor pretrained on the digits, a new head.

    Layers ``"0.0"`` and ``"0.2"`` (64 -> 64 -> 32, ReLU) are first trained with a digit head
    to tell the ten digits apart (``pretrain_steps`` steps of Adam, about 99 % right). The lab
    then trains them under a new head, ``"1"``, to tell odd from even digits (SGD, momentum
    0.9). ``lab.watch`` reports how well the pretrained layers, with their old head, still read
    the digits. Freeze both pretrained layers and that number stays exactly where it was while
    the new head learns parity (above 90 %); leave them free and parity gets a little better
    while the digit accuracy collapses: the layers forget (catastrophic forgetting).

    >>> lab = pretrained_features(pretrain_steps=50)
    >>> lab.layers, list(lab.watch)
    (['0.0', '0.2', '1'], ['digits, pretrained head'])
    """
    _check_args("pretrained_features", seed, lr, pretrain_steps=pretrain_steps)
    manual_seed(seed)
    X, y = data.load_digits()
    body = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
    digit_reader = nn.Sequential(body, nn.Linear(32, 10))
    pretraining = TrainingLab(digit_reader, optim.Adam(digit_reader.named_parameters(), lr=1e-2),
                              F.cross_entropy, (X, y), batch_size=64, seed=seed)
    pretraining.step(pretrain_steps)
    model = nn.Sequential(body, nn.Linear(32, 2))        # the same body, a new head
    opt = optim.SGD(model.named_parameters(), lr=lr, momentum=0.9)
    return TrainingLab(model, opt, F.cross_entropy, (X, y % 2), batch_size=64, seed=seed,
                       name="pretrained features", title=text("lab.title.pretrained_features"),
                       pace=5, clip_default=0.3,
                       watch={text("lab.watch.digits_head"): lambda: accuracy(digit_reader, X, y)})
