"""dltutor.plot: every helper draws, returns its artists, and draws the right numbers.

The checks read the data of the returned artists (line y-data, span extents, scales), never
pixels. Everything runs on matplotlib's Agg backend.
"""
from __future__ import annotations

import base64
import io
import json
import struct
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim, plot
from dltutor.data import make_moons
from dltutor.nn import functional as F
from dltutor.optim import lr_scheduler
from dltutor.plot.common import MAX_FIGWIDTH, _spans_decades
from dltutor.stats import activation_stats
from dltutor.trace import Recorder

FREEZE_AT = 6
STEPS = 14


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _train(steps: int = STEPS, freeze_at: int | None = FREEZE_AT, grad_clip=None,
           histograms_every: int = 0, by: str = "parameter"):
    """A small MLP on the moons data; layer "0" frozen with requires_grad_(False) mid-run."""
    X, y = make_moons(n=128, noise=0.1, seed=0)
    net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = optim.SGD(net.parameters(), lr=0.3, momentum=0.9, grad_clip=grad_clip)
    rec = Recorder(net, opt, histograms_every=histograms_every, by=by)
    xb, yb = dt.tensor(X), dt.tensor(y)
    for step in range(steps):
        if step == freeze_at:
            net[0].requires_grad_(False)
        opt.zero_grad()
        value = F.cross_entropy(net(xb), yb)
        value.backward()
        rec.log_loss(value)
        opt.step()
    return net, rec


@pytest.fixture
def rec():
    return _train()[1]


class _StubRecorder:
    """Just enough of a Recorder to control the values (for the log-scale decision)."""

    by = "parameter"

    def __init__(self, columns: dict[str, list[float]]):
        self.names = list(columns)
        self._values = np.array([columns[n] for n in self.names], dtype=float).T
        self.steps = np.arange(len(self._values))

    def series(self, kind, name=None):
        if kind == "frozen":
            values = np.zeros_like(self._values)
        elif kind in ("loss", "global_grad_norm", "clip_scale"):
            return self._values[:, 0].copy()
        else:
            values = self._values
        return values.copy() if name is None else values[:, self.names.index(name)].copy()

    def frozen_runs(self, name):
        return []                                  # never frozen


def _x_extent(patch) -> tuple[float, float]:
    """x range of an axvspan patch (a Rectangle in matplotlib >= 3.9, a Polygon before)."""
    if hasattr(patch, "get_width"):
        return patch.get_x(), patch.get_x() + patch.get_width()
    xs = np.asarray(patch.get_xy())[:, 0]
    return float(xs.min()), float(xs.max())


def _y_extent(patch) -> tuple[float, float]:
    if hasattr(patch, "get_height"):
        return patch.get_y(), patch.get_y() + patch.get_height()
    ys = np.asarray(patch.get_xy())[:, 1]
    return float(ys.min()), float(ys.max())


# -- traces ------------------------------------------------------------------------------------
def test_traces_lines_are_the_recorded_series(rec):
    artists = plot.traces(rec, "param_norm")
    lines = [a for a in artists if isinstance(a, matplotlib.lines.Line2D)]
    assert [line.get_label() for line in lines] == rec.names
    for line in lines:
        np.testing.assert_array_equal(line.get_xdata(), rec.steps)
        np.testing.assert_array_equal(line.get_ydata(), rec.series("param_norm", line.get_label()))
    ax = lines[0].axes
    assert ax.get_xlabel() == "optimizer step"
    assert "parameter norm" in ax.get_ylabel()
    assert ax.get_legend() is not None
    assert ax.get_title()


def test_traces_into_a_given_axes_and_a_subset_of_names(rec):
    fig, ax = plt.subplots()
    artists = plot.traces(rec, "grad_norm", names="2.weight", ax=ax)
    assert artists[0].axes is ax and len(ax.lines) == 1
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), rec.series("grad_norm", "2.weight"))
    with pytest.raises(KeyError, match="no parameter 'nope'"):
        plot.traces(rec, "grad_norm", names=["nope"], ax=ax)


def test_traces_of_a_per_step_series(rec):
    [line] = plot.traces(rec, "global_grad_norm")
    np.testing.assert_array_equal(line.get_ydata(), rec.series("global_grad_norm"))


def test_traces_shade_the_frozen_steps(rec):
    steps = rec.steps.tolist()
    frozen = rec.series("frozen", "0.weight")
    assert frozen.tolist() == [0.0] * FREEZE_AT + [1.0] * (STEPS - FREEZE_AT)
    artists = plot.traces(rec, "param_norm")
    spans = [a for a in artists if not isinstance(a, matplotlib.lines.Line2D)]
    # weight and bias of layer 0 are frozen over the same steps: one shared span
    assert len(spans) == 1
    assert spans[0].get_label() == "frozen (0.weight, 0.bias)"
    assert _x_extent(spans[0]) == pytest.approx((steps[FREEZE_AT] - 0.5, steps[-1] + 0.5))
    assert "frozen (0.weight, 0.bias)" in [t.get_text() for t in
                                           spans[0].axes.get_legend().get_texts()]


def test_a_frozen_span_of_one_name_takes_its_line_colour(rec):
    line, span = plot.traces(rec, "update_norm", names=["0.bias"])
    assert span.get_label() == "frozen (0.bias)"
    assert matplotlib.colors.same_color(span.get_facecolor()[:3], line.get_color())
    assert _x_extent(span) == pytest.approx((FREEZE_AT - 0.5, STEPS - 0.5))


def test_frozen_spans_follow_freeze_and_unfreeze():
    X, y = make_moons(n=64, seed=1)
    net = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = optim.SGD(net.parameters(), lr=0.1)
    rec = Recorder(net, opt, every=2)
    for step in range(16):
        net[2].requires_grad_(not 4 <= step < 10)      # frozen on steps 4..9
        opt.zero_grad()
        F.cross_entropy(net(dt.tensor(X)), dt.tensor(y)).backward()
        opt.step()
    assert rec.steps.tolist() == [0, 2, 4, 6, 8, 10, 12, 14]
    artists = plot.traces(rec, "grad_norm", names=["2.weight"])
    [span] = artists[1:]
    # records every 2 steps: the frozen records 4, 6, 8 span from 3 to 9
    assert _x_extent(span) == pytest.approx((3.0, 9.0))


def test_log_scale_is_chosen_when_values_span_decades():
    wide = _StubRecorder({"a": [1.0, 0.1, 0.01, 0.001], "b": [0.5, 0.5, 0.0, 0.4]})
    narrow = _StubRecorder({"a": [1.0, 2.0, 3.0, 0.05], "b": [0.0, 0.0, 1.0, 0.3]})
    assert plot.traces(wide, "grad_norm")[0].axes.get_yscale() == "log"
    # 20x is not two decades, and the zeros do not count
    assert plot.traces(narrow, "grad_norm")[0].axes.get_yscale() == "linear"
    assert plot.traces(narrow, "grad_norm", log=True)[0].axes.get_yscale() == "log"
    assert plot.traces(wide, "grad_norm", log=False)[0].axes.get_yscale() == "linear"


def test_log_scale_on_real_traces(rec):
    grad = rec.series("grad_norm")
    expect = "log" if _spans_decades(grad) else "linear"
    assert plot.traces(rec, "grad_norm")[0].axes.get_yscale() == expect
    # the lr of SGD never changes: linear
    assert plot.traces(rec, "lr")[0].axes.get_yscale() == "linear"


# -- update ratio, clipping, loss --------------------------------------------------------------
def test_update_ratio_has_band_and_reference_line(rec):
    artists = plot.update_ratio(rec)
    lines = artists[:len(rec.names)]
    for line, name in zip(lines, rec.names):
        np.testing.assert_array_equal(line.get_ydata(), rec.series("update_ratio", name))
    band, ref = artists[-2], artists[-1]
    assert _y_extent(band) == pytest.approx((1e-4, 1e-2))
    assert list(ref.get_ydata()) == [1e-3, 1e-3]
    assert ref.get_linestyle() == "--"
    ax = ref.axes
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "optimizer step" and "ratio" in ax.get_ylabel()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("rule of thumb" in label for label in labels)
    assert "frozen (0.weight, 0.bias)" in labels


def test_update_ratio_custom_reference(rec):
    artists = plot.update_ratio(rec, names="2.weight", band=(1e-5, 1e-1), reference=3e-3)
    assert list(artists[-1].get_ydata()) == [3e-3, 3e-3]
    assert _y_extent(artists[-2]) == pytest.approx((1e-5, 1e-1))


def test_grad_norm_clipping_global():
    _, rec = _train(freeze_at=None, grad_clip=optim.ClipGradByGlobalNorm(0.2))
    before, after, *shading = plot.grad_norm_clipping(rec)
    np.testing.assert_array_equal(before.get_ydata(), rec.series("global_grad_norm"))
    expected = rec.series("clip_scale") * rec.series("global_grad_norm")
    np.testing.assert_allclose(after.get_ydata(), expected, rtol=1e-5)
    assert (after.get_ydata() <= 0.2 + 1e-6).all()
    assert (before.get_ydata() > 0.2).any() and len(shading) == 1
    assert before.get_label() == "before clipping" and after.get_label() == "after clipping"


def test_grad_norm_clipping_per_name_and_unclipped(rec):
    before, after, *shading = plot.grad_norm_clipping(rec, name="2.weight")
    np.testing.assert_array_equal(before.get_ydata(), rec.series("grad_norm", "2.weight"))
    np.testing.assert_array_equal(after.get_ydata(), rec.series("clipped_grad_norm", "2.weight"))
    assert shading == []            # no grad_clip: nothing clipped, nothing shaded


def test_grad_norm_clipping_respects_need_clip_false():
    X, y = make_moons(n=64, seed=0)
    net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
    net[2].bias.need_clip = False
    opt = optim.SGD(net.parameters(), lr=0.1, grad_clip=optim.ClipGradByGlobalNorm(0.05))
    rec = Recorder(net, opt)
    for _ in range(3):
        opt.zero_grad()
        F.cross_entropy(net(dt.tensor(X)), dt.tensor(y)).backward()
        opt.step()
    _, after, *_ = plot.grad_norm_clipping(rec)
    clipped = rec.series("clipped_grad_norm")
    np.testing.assert_allclose(after.get_ydata(), np.sqrt((clipped ** 2).sum(axis=1)))
    np.testing.assert_array_equal(rec.series("clipped_grad_norm", "2.bias"),
                                  rec.series("grad_norm", "2.bias"))


def test_loss_curve_and_smoothing(rec):
    [raw] = plot.loss(rec)
    np.testing.assert_array_equal(raw.get_ydata(), rec.series("loss"))
    raw, smoothed = plot.loss(rec, smooth=0.5)
    values = rec.series("loss")
    avg, expected = 0.0, []
    for t, v in enumerate(values):
        avg = 0.5 * avg + 0.5 * v
        expected.append(avg / (1 - 0.5 ** (t + 1)))
    np.testing.assert_allclose(smoothed.get_ydata(), expected)
    assert smoothed.get_ydata()[0] == pytest.approx(values[0])
    with pytest.raises(ValueError, match="smooth"):
        plot.loss(rec, smooth=1.0)


def test_loss_without_logged_loss_explains():
    net = nn.Sequential(nn.Linear(2, 2))
    opt = optim.SGD(net.parameters(), lr=0.1)
    rec = Recorder(net, opt)
    opt.zero_grad()
    net(dt.ones(3, 2)).sum().backward()
    opt.step()
    with pytest.raises(ValueError, match="log_loss"):
        plot.loss(rec)


# -- lr schedule ---------------------------------------------------------------------------------
def test_lr_schedule_equals_preview():
    def make(opt):
        return lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.1, total_iters=8)

    [stairs] = plot.lr_schedule(make, steps=12, label="linear")
    expected = lr_scheduler.preview(make, 12)
    values, edges, _ = stairs.get_data()
    np.testing.assert_array_equal(values, expected)
    np.testing.assert_array_equal(edges, np.arange(13))
    assert stairs.axes.get_ylabel() == "learning rate"
    assert stairs.axes.get_yscale() == "linear"          # 0.1 .. 0.01: one decade


def test_lr_schedule_from_an_array_and_log_scale():
    lrs = 0.1 * 0.5 ** np.arange(20)                      # six decades
    fig, ax = plt.subplots()
    [stairs] = plot.lr_schedule(lrs, ax=ax)
    np.testing.assert_array_equal(stairs.get_data()[0], lrs)
    assert ax.get_yscale() == "linear" and stairs.axes is ax  # schedules read best linear
    fig2, ax2 = plt.subplots()
    plot.lr_schedule(lrs, ax=ax2, log=None)                  # auto: six decades -> log
    assert ax2.get_yscale() == "log"
    plt.close(fig2)
    with pytest.raises(TypeError, match="steps"):
        plot.lr_schedule(lambda opt: lr_scheduler.StepLR(opt, step_size=2))


# -- layer statistics ------------------------------------------------------------------------------
def _deep_net():
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 4))


def _hooks_removed(net) -> bool:
    return all(not m._forward_hooks for m in net.modules())


def test_layer_statistics_draws_the_stds():
    net = _deep_net()
    x = np.random.default_rng(0).normal(size=(64, 16)).astype(np.float32)   # NumPy input
    fig, ax = plt.subplots()
    stats = plot.layer_statistics(net, x, ax=ax, label="default")
    expected = [std for _, _, std in activation_stats(net, x)]
    assert [name for name, _ in stats] == ["0", "1", "2", "3", "4"]
    assert [std for _, std in stats] == pytest.approx(expected)
    np.testing.assert_allclose(ax.lines[-1].get_ydata(), expected)
    assert [t.get_text() for t in ax.get_xticklabels()][0] == "0\nLinear"
    assert _hooks_removed(net)


def test_layer_statistics_gradient_kind_with_a_loss_function():
    X, y = make_moons(n=32, seed=0)
    net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2)).requires_grad_(False)
    stats = plot.layer_statistics(net, X, kind="gradient",
                                  loss_fn=lambda out: F.cross_entropy(out, dt.tensor(y)))
    assert len(stats) == 3 and all(std > 0 for _, std in stats)    # frozen net, still works
    assert _hooks_removed(net)
    with pytest.raises(ValueError, match="kind"):
        plot.layer_statistics(net, X, kind="weights")


# -- histograms --------------------------------------------------------------------------------------
def test_histograms_one_outline_per_kept_histogram():
    _, rec = _train(histograms_every=3)
    outlines = plot.histograms(rec, "2.weight")
    assert len(outlines) == len(rec.histograms)
    for outline, entry in zip(outlines, rec.histograms):
        counts, edges = entry["params"]["2.weight"]
        values, got_edges, _ = outline.get_data()
        np.testing.assert_allclose(got_edges, edges)
        np.testing.assert_allclose(values * np.diff(edges), counts / counts.sum())
    # layer 0 is frozen from step FREEZE_AT: no gradient histograms after that
    grads = plot.histograms(rec, "0.weight", kind="grads")
    kept = [h["step"] for h in rec.histograms if h["step"] < FREEZE_AT]
    assert len(grads) == len(kept)
    assert len(outlines[0].figure.axes) == 2          # the plot and its colorbar


def test_histograms_explain_what_is_missing(rec):
    with pytest.raises(ValueError, match="histograms_every"):
        plot.histograms(rec, "0.weight")
    _, rec = _train(histograms_every=2)
    with pytest.raises(KeyError, match="0.weight"):
        plot.histograms(rec, "0.weight_typo")
    with pytest.raises(ValueError, match="kind"):
        plot.histograms(rec, "0.weight", kind="weights")


# -- decision boundary ------------------------------------------------------------------------------
def test_decision_boundary_covers_the_data_and_restores_the_mode():
    X, y = make_moons(n=80, seed=0)
    net = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.5), nn.Tanh(), nn.Linear(8, 2))
    net[1].eval()                                        # mixed modes must come back as they were
    contour, *points = plot.decision_boundary(net, X, y, resolution=40, padding=0.5)
    assert net.training and not net[1].training and net[0].training
    vertices = np.concatenate([p.vertices for p in contour.get_paths() if len(p.vertices)])
    assert vertices[:, 0].min() <= X[:, 0].min() - 0.5 + 1e-6
    assert vertices[:, 0].max() >= X[:, 0].max() + 0.5 - 1e-6
    assert vertices[:, 1].min() <= X[:, 1].min() - 0.5 + 1e-6
    assert vertices[:, 1].max() >= X[:, 1].max() + 0.5 - 1e-6
    assert [p.get_label() for p in points] == ["class 0", "class 1"]
    for c, p in enumerate(points):
        np.testing.assert_array_equal(p.get_offsets(), X[y == c])
    net.eval()
    plot.decision_boundary(net, X, y, resolution=20)
    assert not any(m.training for m in net.modules())


def test_decision_boundary_predicts_with_the_model():
    X = np.array([[-1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    y = np.array([0, 1])
    net = nn.Sequential(nn.Linear(2, 2))
    with dt.no_grad():
        net[0].weight.set_value(np.array([[-1.0, 0.0], [1.0, 0.0]], dtype=np.float32))
        net[0].bias.set_value(np.zeros(2, dtype=np.float32))
    contour, *_ = plot.decision_boundary(net, X, y, resolution=21, padding=0.5)
    assert "100.0%" in contour.axes.get_title()
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        plot.decision_boundary(net, np.zeros((3, 3)), np.zeros(3))


# -- no side effects -----------------------------------------------------------------------------------
def test_no_global_style_changes_and_no_show(rec, monkeypatch):
    before = dict(matplotlib.rcParams)
    monkeypatch.setattr(plt, "show", lambda *a, **k: pytest.fail("plot called plt.show()"))
    plot.traces(rec, "grad_norm")
    plot.update_ratio(rec)
    plot.grad_norm_clipping(rec)
    plot.loss(rec, smooth=0.9)
    plot.lr_schedule(np.linspace(0.1, 0.01, 10))
    plot.layer_statistics(_deep_net(), dt.randn(8, 16), kind="gradient")
    X, y = make_moons(n=40, seed=0)
    plot.decision_boundary(nn.Sequential(nn.Linear(2, 2)), X, y, resolution=10)
    assert dict(matplotlib.rcParams) == before


def test_each_helper_without_ax_makes_its_own_figure(rec):
    n = len(plt.get_fignums())
    plot.traces(rec)
    plot.loss(rec)
    assert len(plt.get_fignums()) == n + 2


def test_import_dltutor_does_not_import_plot_or_matplotlib():
    code = ("import sys, dltutor\n"
            "assert 'dltutor.plot' not in sys.modules, 'import dltutor imported dltutor.plot'\n"
            "assert 'matplotlib' not in sys.modules, 'import dltutor imported matplotlib'\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_traces_of_a_per_layer_recorder():
    _, rec = _train(by="layer")
    assert rec.names == ["0", "2"]
    artists = plot.traces(rec, "update_norm")
    line0, line2, span = artists
    np.testing.assert_array_equal(line2.get_ydata(), rec.series("update_norm", "2"))
    assert span.get_label() == "frozen (0)"
    assert _x_extent(span) == pytest.approx((FREEZE_AT - 0.5, STEPS - 0.5))
    assert line0.axes.get_title() == "Update norm per layer"


# -- readable on the website -------------------------------------------------------------------------
# The kit's website shows a notebook in a text column 658 px wide (at a 1280 px window) and
# scales a wider figure down to it. Text must stay at 10 px or more there.
COLUMN_PX = 658
MIN_TEXT_PX = 10.0
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _text_px(points: float, dpi: float, width_px: float) -> float:
    """Height in px of ``points`` text of a figure ``width_px`` wide at ``dpi``, in the column."""
    return points * dpi / 72 * min(1.0, COLUMN_PX / width_px)


def _png_width_and_dpi(png: bytes) -> tuple[int, float]:
    """Width (IHDR) and horizontal dpi (pHYs; 72 without one) from a PNG's header."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width = struct.unpack(">I", png[16:20])[0]
    dpi, pos = 72.0, 8
    while pos + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        if kind == b"pHYs":
            per_unit, _, unit = struct.unpack(">IIB", png[pos + 8:pos + 17])
            dpi = per_unit * 0.0254 if unit == 1 else 72.0        # unit 1: pixels per metre
            break
        if kind in (b"IDAT", b"IEND"):
            break
        pos += 12 + length
    return width, dpi


def _notebook_pngs(path: Path):
    """(index of the figure in the notebook, code cell's first line, PNG bytes) of each figure."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    index = 0
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                source = "".join(cell["source"]).strip().splitlines() or [""]
                yield index, source[0], base64.b64decode(png if isinstance(png, str)
                                                         else "".join(png))
                index += 1


@pytest.mark.parametrize("notebook", sorted([*NOTEBOOKS.glob("*.ipynb"),
                                             *NOTEBOOKS.glob("zh/*.ipynb")]),
                         ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_notebook_figures_keep_their_text_readable_on_the_website(notebook):
    """10 pt text of every figure stays >= 10 px once the figure is scaled to the column:
    at 100 dpi a figure at most 914 px wide. (Legends and notes use "small", 8.3 pt: keep
    figures 7.2 in wide, more rows rather than more columns; see plot.common.MAX_FIGWIDTH.)
    Rebuild the notebooks (make notebooks) after changing a figure's size."""
    too_wide = []
    for index, first_line, png in _notebook_pngs(notebook):
        width, dpi = _png_width_and_dpi(png)
        px = _text_px(10, dpi, width)
        if px < MIN_TEXT_PX - 1e-9:
            too_wide.append(f"figure {index} ({first_line!r}): {width} px at {dpi:.0f} dpi, "
                            f"10 pt text shown at {px:.1f} px (at most "
                            f"{COLUMN_PX * dpi / 72:.0f} px wide)")
    assert not too_wide, f"{notebook.name}: figures too wide for the {COLUMN_PX} px column:\n" + \
        "\n".join(too_wide)


def test_png_header_reader():
    fig = plt.figure(figsize=(3, 2), dpi=80)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=fig.dpi)
    assert _png_width_and_dpi(buffer.getvalue()) == (240, pytest.approx(80, abs=0.1))


def _smallest_text_px(fig) -> float:
    """The smallest drawn text of ``fig`` in px once saved as Jupyter shows it (tight bbox,
    the figure's dpi) and scaled to the column."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", dpi=fig.dpi)
    width, dpi = _png_width_and_dpi(buffer.getvalue())
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text)
             if t.get_visible() and t.get_text().strip() and t.get_window_extent().width > 0]
    return _text_px(min(sizes), dpi, width)


def test_helper_figures_keep_their_text_readable_on_the_website():
    _, rec = _train(histograms_every=3, grad_clip=optim.ClipGradByGlobalNorm(0.5))
    X, y = make_moons(n=60, seed=0)
    deep = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(16)])
    drawn = {
        "traces": plot.traces(rec, "param_norm"),
        "update_ratio": plot.update_ratio(rec),
        "grad_norm_clipping": plot.grad_norm_clipping(rec),
        "loss": plot.loss(rec, smooth=0.9),
        "lr_schedule": plot.lr_schedule(np.linspace(0.1, 0.01, 10), label="linear"),
        "layer_statistics": plot.layer_statistics(deep, dt.randn(16, 8), label="default"),
        "histograms": plot.histograms(rec, "2.weight"),
        "decision_boundary": plot.decision_boundary(nn.Sequential(nn.Linear(2, 2)), X, y,
                                                    resolution=10),
    }
    figures = [plt.figure(n) for n in plt.get_fignums()]
    assert len(figures) == len(drawn)
    for name, fig in zip(drawn, figures):
        assert fig.get_figwidth() <= MAX_FIGWIDTH + 1e-9, name
        assert _smallest_text_px(fig) >= MIN_TEXT_PX, name


def test_many_layers_rotate_their_labels_instead_of_shrinking_them():
    deep = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(16)])
    _, ax = plt.subplots(figsize=(MAX_FIGWIDTH, 3))
    plot.layer_statistics(deep, dt.randn(16, 8), ax=ax)
    labels = ax.get_xticklabels()
    assert {label.get_fontsize() for label in labels} == {matplotlib.font_manager.FontProperties(
        size="small").get_size_in_points()}
    assert labels[0].get_rotation() == 90
    _, ax = plt.subplots(figsize=(MAX_FIGWIDTH, 3))
    plot.layer_statistics(_deep_net(), dt.randn(8, 16), ax=ax)
    assert ax.get_xticklabels()[0].get_rotation() == 0
