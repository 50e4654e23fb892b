"""The kit speaks English or Chinese: complete tables, a checked choice, verdicts in both."""
from __future__ import annotations

import os
import re
import string
import subprocess
import sys

import pytest

import dltutor as dt
from dltutor import i18n
from dltutor.exercises import ____, chapter


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_language_has_every_key_with_the_same_fields():
    english = i18n.TABLES["en"]
    for language, table in i18n.TABLES.items():
        assert set(table) == set(english), language
        for key, template in english.items():
            assert fields(table[key]) == fields(template), (language, key)


def test_the_chinese_table_is_chinese():
    # the kit's own table; the exercises' hints may be code alone, and what they say is checked
    # as a learner reads it (test_chinese_runtime_text.py)
    from dltutor.i18n import zh, zh_distributed

    for key, template in {**zh.TEXT, **zh_distributed.TEXT}.items():
        words = re.sub(r"\{[^}]*\}", "", template)          # what is left besides the fields
        words = re.sub(r"\S*[_=]\S*|True|False|None", "", words)  # and code: lr_mult, need_clip
        if re.search(r"[A-Za-z]", words):
            assert re.search(r"[\u4e00-\u9fff]", words), (key, template)


def test_set_language_switches_and_refuses_other_languages():
    assert dt.get_language() == "en"
    with pytest.raises(ValueError, match="'en' and 'zh'"):
        dt.set_language("cn")
    assert dt.get_language() == "en"                      # a refused choice changes nothing
    dt.set_language("zh")
    try:
        assert dt.get_language() == "zh"
    finally:
        dt.set_language("en")


def test_an_exercise_answers_in_the_learners_language():
    q1 = chapter("01").q1
    english = q1.verdict({name: ____ for name in q1.names})
    with i18n.use_language("zh"):
        chinese = q1.verdict({name: ____ for name in q1.names})
    assert english.status == chinese.status == "not attempted"     # statuses are keys
    assert english.message.startswith("Exercise 01.1: not attempted")
    assert chinese.message.startswith("练习 01.1：还没有作答")


def test_a_demo_is_titled_in_the_learners_language():
    """A demo's title and watched number are texts of the tables, said when the demo is made;
    its name, which its repr prints (a stored output of chapter 12), stays the same."""
    from dltutor.lab import demos

    with i18n.use_language("zh"):
        moons, pretrained = demos.moons_mlp(), demos.pretrained_features(pretrain_steps=1)
    assert moons.title == "月牙 MLP" and repr(moons).startswith("TrainingLab('moons MLP', ")
    assert list(pretrained.watch) == ["数字（预训练的输出层）"]
    assert demos.moons_mlp().title == "moons MLP"


def test_the_diagnostics_report_in_the_learners_language():
    from dltutor import diagnose, nn, optim

    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    opt = optim.SGD([{"params": net[0].named_parameters(prefix="0")},
                     {"params": net[2].named_parameters(prefix="2"), "lr": 0.0}], lr=0.1)
    net(dt.ones(4, 2)).sum().backward()
    english = diagnose.why_not_updating(net, opt, "2.weight")
    with i18n.use_language("zh"):
        chinese = diagnose.why_not_updating(net, opt, "2.weight")
        summary = repr(diagnose.summary(net, opt))
        lr = repr(diagnose.explain_lr(opt, "2.weight"))
    assert english.cause == chinese.cause == "lr_zero"          # causes are codes, not words
    assert english.verdict.startswith("not updating because: its group's lr is 0")
    assert chinese.verdict.startswith("不会更新，原因是它所在参数组的学习率为 0")
    assert [r["check"] for r in chinese.rows][:2] == ["在优化器中？", "requires_grad？"]
    assert "形状" in summary and "合计" in summary and "shape" not in summary
    assert "有效学习率" in lr and "已冻结" in lr


def keys_named_in(path) -> set[str]:
    """The keys a module of the kit names: the first argument of each ``text("...")`` call, and
    in a chapter's exercises also the keys it keeps for later (``hints=("ch07.q1.hint1", ...)``,
    a table of ``("ch01.sum_squares", f)``)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and (getattr(node.func, "id", None) == "text"
                     or getattr(node.func, "attr", None) == "text"
                     and getattr(node.func.value, "id", None) == "i18n")):
            found.add(node.args[0].value)
        elif (path.parent.name == "exercises" and isinstance(node, ast.Constant)
              and isinstance(node.value, str) and re.fullmatch(r"ch\d\d\.[\w.]+", node.value)):
            found.add(node.value)
    return found


def kit_modules():
    from pathlib import Path

    return [path for path in sorted(Path(dt.__file__).parent.rglob("*.py"))
            if "import text" in (source := path.read_text(encoding="utf-8"))
            or "i18n.text(" in source]


def test_every_key_the_kit_names_has_a_text():
    """A key with no text would raise KeyError in front of a learner, on the one path that
    says it (a rare wrong answer): find it here instead."""
    modules = kit_modules()
    assert len(modules) > 30
    named = {path.name: keys_named_in(path) for path in modules}
    assert sum(len(keys) for keys in named.values()) > 600
    missing = {name: sorted(keys - set(i18n.TABLES["en"])) for name, keys in named.items()
               if keys - set(i18n.TABLES["en"])}
    assert not missing, f"add these keys to dltutor/i18n's tables: {missing}"


def test_every_exercise_text_is_said_by_its_chapter():
    """The chapters' tables hold no text that nothing shows: each ``chNN.`` key is named in
    dltutor/exercises/chNN.py."""
    from pathlib import Path

    from dltutor.i18n import (en_exercises_01_06, en_exercises_07_12, zh_exercises_01_06,
                              zh_exercises_07_12)

    folder = Path(dt.__file__).parent / "exercises"
    unsaid = [key for table in (en_exercises_01_06, en_exercises_07_12, zh_exercises_01_06,
                                zh_exercises_07_12) for key in table.TEXT
              if f'"{key}"' not in (folder / f"{key[:4]}.py").read_text(encoding="utf-8")]
    assert not unsaid, f"no exercise says these; remove them from the tables: {unsaid}"


def test_a_hint_is_shown_in_chinese():
    from dltutor.exercises import chapter

    q1 = chapter("07").q1
    q1.hints_shown = 0
    with i18n.use_language("zh"):
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()) as out:
            q1.hint()
    q1.hints_shown = 0
    assert out.getvalue().startswith("练习 07.1 的提示 1/2：每个批量调用一次的话")


def test_chinese_reports_line_up_in_a_monospace_font():
    from dltutor import diagnose, nn
    from dltutor.diagnose.report import text_width

    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    with i18n.use_language("zh"):
        header, rule, *rows = repr(diagnose.summary(net)).splitlines()[1:4]
    assert header.split()[:2] == ["名称", "形状"]

    def second_column(line: str) -> int:
        """Display columns before the second field (fields are two or more spaces apart)."""
        match = re.match(r"(\s*\S+(?: \S+)*\s{2,})", line)
        return text_width(match.group(1))

    # the header's 形状 (two characters, four columns) starts where the shapes start
    assert second_column(header) == second_column(rule) == second_column(rows[0])


@pytest.mark.parametrize("spelling, language", [("zh_CN.UTF-8", "zh"), ("zh-CN", "zh"),
                                                ("zh_CN", "zh"), ("ZH", "zh"),
                                                ("en_US.UTF-8", "en"), ("C.UTF-8", "en"),
                                                ("", "en")])
def test_dltutor_lang_takes_a_locales_spelling(spelling, language):
    """What a Chinese system sets (zh_CN.UTF-8) must not break the import (it did: ValueError)."""
    assert _language_at_import(spelling) == (language, "")


def test_an_unknown_dltutor_lang_warns_and_speaks_english():
    language, warned = _language_at_import("klingon")
    assert language == "en" and "DLTUTOR_LANG='klingon'" in warned and "using 'en'" in warned


def test_set_language_takes_a_locales_spelling_and_refuses_an_unknown_one():
    import dltutor as dt

    try:
        dt.set_language("zh_CN.UTF-8")
        assert dt.get_language() == "zh"
        with pytest.raises(ValueError, match="the kit speaks 'en' and 'zh', not 'fr'"):
            dt.set_language("fr")
        assert dt.get_language() == "zh"                 # refused: nothing changed
    finally:
        dt.set_language("en")


def _language_at_import(spelling: str) -> tuple[str, str]:
    """The language a fresh ``import dltutor`` speaks with DLTUTOR_LANG=spelling, and what it
    warned on stderr."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "DLTUTOR_LANG": spelling,
           "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", "import dltutor; print(dltutor.get_language())"],
                          env=env, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip(), done.stderr.strip()
