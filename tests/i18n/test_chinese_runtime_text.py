"""What a learner reads in the Chinese edition, produced the way a learner produces it: every
exercise's verdicts for the reference answer and each typical wrong one, the diagnose tables of
every cause, and the lab's status line and step markers, all in Chinese. Each text must follow
the Chinese edition's rules: no ASCII ``:`` ``;`` ``,`` beside a Chinese character, no space
between two Chinese characters or before and after Chinese punctuation, and no English sentence (English words stay only as code,
names and numbers)."""
from __future__ import annotations

import contextlib
import html
import importlib
import io
import re

import pytest

import dltutor as dt
from dltutor import diagnose, exercises, nn, optim
from dltutor.lab import demos, status

HAN = "\u3400-\u9fff"
CJK = HAN + "\u3000-\u303f\uff00-\uffef"
ASCII_PUNCTUATION = re.compile(rf"[{CJK}][:;,]|[:;,] ?[{CJK}]")
SPACE_BETWEEN = re.compile(rf"[{HAN}] +[{HAN}]|\S +[（，。；：）、]|[（：；，。] +\S")
# four English words in a row (lower-case words of two letters or more, single spaces): prose,
# not code or a name
ENGLISH_SENTENCE = re.compile(r"(?<![\w.`'\"(=])(?:[a-z]{2,} ){3,}[a-z]{2,}\b(?![\w(`'\"])")
# The kit quotes an error the learner's own code raised as it is (the engine speaks English by
# design, so the message can be searched for): "抛出了 ValueError：<message>".
QUOTED_ERROR = re.compile(r"(抛出了 \w+：).*$", re.M)


def problems(text: str) -> list[str]:
    """What in ``text`` breaks the Chinese edition's rules, with a little context each."""
    plain = QUOTED_ERROR.sub(r"\1", html.unescape(text))
    plain = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"|<[^>]*>", "X", plain)   # code, quoted names, tags
    found = []
    for rule, pattern in (("ASCII punctuation", ASCII_PUNCTUATION),
                          ("stray space", SPACE_BETWEEN),
                          ("English sentence", ENGLISH_SENTENCE)):
        for match in pattern.finditer(plain):
            found.append(f"{rule}: ...{plain[max(0, match.start() - 20):match.end() + 20]}...")
    return found


@pytest.fixture
def chinese():
    dt.set_language("zh")
    yield
    dt.set_language("en")


def exercise_texts() -> list[tuple[str, str]]:
    texts = []
    for number in sorted(exercises.CHAPTERS):
        cases = importlib.import_module(f"tests.exercises.answers.ch{number}").CASES
        for exercise in exercises.CHAPTERS[number]:
            right, wrong = cases[exercise.id]
            for values in [right] + [values for values, _ in wrong]:
                texts.append((exercise.id, exercise.verdict(values).message))
            texts.append((exercise.id, exercise.verdict({}).message))
            for _ in range(3):                # every hint, then "no more hints"
                printed = io.StringIO()
                with contextlib.redirect_stdout(printed):
                    exercise.hint()
                texts.append((exercise.id, printed.getvalue()))
    return texts


def test_every_exercise_verdict_and_hint_follows_the_chinese_rules(chinese):
    bad = {f"{i}: {text}": problems(text) for i, text in exercise_texts() if problems(text)}
    assert not bad, "\n".join(f"{k}\n  {v}" for k, v in bad.items())


def diagnose_texts() -> list[str]:
    """The four reports of a model that has every cause in it, as text and as HTML."""
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 4), nn.Linear(4, 1))
    net[2].weight.requires_grad_(False)
    net[3].weight.lr_mult = 0.0
    net[3].bias.regularizer = optim.L1Decay(0.001)
    opt = optim.SGD([{"params": net[0].named_parameters(prefix="0"), "lr": 0.0},
                     {"params": list(net[3].named_parameters(prefix="3"))
                      + list(net[1].named_parameters(prefix="1"))}],
                    lr=0.1, momentum=0.9, weight_decay=0.01,
                    grad_clip=optim.ClipGradByNorm(1e-5))
    loss = net(dt.ones(5, 3)).sum()
    reports = [diagnose.why_not_updating(net, opt, name, loss=loss)
               for name, _ in net.named_parameters()]
    loss.backward()
    opt.step()
    reports += [diagnose.why_not_updating(net, opt, name) for name, _ in net.named_parameters()]
    reports += [diagnose.why_not_updating(net.eval(), opt, "1.running_mean"),
                diagnose.summary(net, opt), diagnose.ties(net)]
    reports += [diagnose.explain_lr(opt, name) for name in ("0.weight", "3.bias", "1.weight")]
    return reports


def report_texts(report) -> list[str]:
    """A report's title, headers, every cell and its footer (a table's padding is not text)."""
    return [report.title, *report._headers(), *(c for row in report._cells() for c in row),
            *report._footer()]


def test_every_diagnose_report_follows_the_chinese_rules(chinese):
    reports = diagnose_texts()
    texts = [text for report in reports for text in report_texts(report)]
    bad = {text: problems(text) for text in texts if problems(text)}
    assert not bad, "\n\n".join(f"{k}\n  {v}" for k, v in bad.items())
    # a report's status column speaks Chinese too
    statuses = {row[-1] for report in reports if report.columns[-1] == "status"
                for row in report._cells()}
    assert not statuses & {"ok", "problem", "warning", "unknown", "n/a"}, statuses


def _status_line(lab, error: str | None) -> str:
    keys = {layer: layer for layer in lab.layers}
    data = status.status_data(lab, keys, running=False, pace=3.0, steps_per_second=0.0,
                              redraws=0, redraws_per_second=0.0, draw_requests=1,
                              draw_seconds=0.001, error=error)
    return status.status_html(data, lab.state())


def lab_texts() -> list[str]:
    """The lab's status line after each control and each refused value, the error of a run
    whose loss became NaN, and its step markers."""
    lab = demos.moons_mlp()
    lab.step(2)
    lab.freeze("2")
    lab.set_lr_mult("0", 3)
    lab.set_clip("global_norm", 0.5)
    lab.step(1)
    lab.set_clip(None)
    lab.set_lr(0.2)
    lab.freeze("2", False)
    texts = [_status_line(lab, None)]
    for refused in (lambda: lab.set_lr(-1.0), lambda: lab.set_clip("global_norm", 0),
                    lambda: lab.set_lr_mult("0", -2), lambda: lab.freeze("9")):
        with pytest.raises(Exception) as error:
            refused()
        texts.append(_status_line(lab, status.error_text(error.value)))
    exploding = demos.exploding_gradients()
    exploding.run(50)
    texts.append(_status_line(exploding, None))
    texts += [what for _, what in lab.events]
    return texts


def test_the_lab_status_line_and_markers_follow_the_chinese_rules(chinese):
    bad = {text: problems(text) for text in lab_texts() if problems(text)}
    assert not bad, "\n\n".join(f"{k}\n  {v}" for k, v in bad.items())


@pytest.mark.parametrize("text, rule", [
    ("在优化器中: 是：参数组 0", "ASCII punctuation"),
    ("ClipGradByNorm(clip_norm=1e-05), 把这个梯度缩放", "ASCII punctuation"),
    ("否：是 位于 '1' 的缓冲区", "stray space"),
    ("来自参数本身的 L1Decay(0.001) （取代参数组 0 的 weight_decay）", "stray space"),
    ("最近的错误：the loss became nan at step 5", "English sentence"),
])
def test_the_rules_catch_what_the_editor_found(text, rule):
    assert any(problem.startswith(rule) for problem in problems(text))


def test_the_rules_let_code_names_and_quoted_errors_through():
    assert problems("练习 01.6：还不对。f 抛出了 RuntimeError：backward() on a tensor that does "
                    "not require grad") == []
    assert problems("把 `lab.freeze('0')` 和 'block 2' 写进 `with dt.no_grad():` 中") == []


# -- a layer has one name: the legend's "层 0.0", never "第 0.0 层" -------------------------------
ORDINAL_LAYER = re.compile(r"第\s*['\"`]?[\d.]+['\"`]?\s*层")   # 第 2 层, 第 0.0 层, 第 '0' 层
# (第一层, "the first layer", is an ordinal word and stays)
LAYER_NAMED = re.compile(r"层 '?([\d.]+)'?")            # 层 2, 层 0.0, 层 '0'


def test_no_chinese_text_names_a_layer_by_ordinal():
    """第 N 层 reads as "the N-th layer", but a lab's layer is named by its key in the model
    ('0', '2', '0.0'): 第 2 层 would be the third layer of three and 第 0.0 层 means nothing."""
    from dltutor.i18n import TABLES
    bad = {key: value for key, value in TABLES["zh"].items() if ORDINAL_LAYER.search(value)}
    assert not bad, bad


@pytest.mark.parametrize("demo", ["two moons", "exploding gradients", "spirals",
                                  "pretrained features", "tied layer", "handwritten digits"])
def test_the_lab_names_a_layer_as_its_legend_does(chinese, demo):
    from dltutor.i18n import text
    from dltutor.lab import app, chart, controls
    lab = app.DEMOS[demo]()
    legend = chart.legend_html(lab, chart.layer_colors(lab))
    modules = dict(lab.model.named_modules())
    for layer in lab.layers:
        name = text("lab.legend.trace", by=text("lab.legend.by.layer"), name=layer)
        assert html.escape(name) in legend
        assert html.escape(name) in controls.layer_label(layer, modules.get(layer)).value
        lab.freeze(layer)
        lab.set_lr_mult(layer, 2)
        assert all(name in what for _, what in lab.events[-2:]), lab.events[-2:]
        assert name in text("lab.what.lr_mult", layer=layer)
    advice = text(f"lab.try.{demo}")
    assert not ORDINAL_LAYER.search(advice), advice
    assert set(LAYER_NAMED.findall(advice)) <= set(lab.layers), (advice, lab.layers)
