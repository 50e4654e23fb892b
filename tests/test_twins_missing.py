"""A learner without PyTorch who runs a twin gets one line, not a traceback, and Run All goes
on (issue 50; dltutor/twins.py).

Each test starts a real IPython kernel in the kit's environment (which has no PyTorch and no
Paddle, as a learner's may not), runs cells in it as a notebook would, and reads what the
notebook would show: each cell's stream and error messages, and whether it succeeded.
"""
from __future__ import annotations

import importlib.util
import os

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient

from dltutor import i18n, twins

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(module) for module, _ in twins.FRAMEWORKS.values()),
    reason="this environment has a framework installed; the kit's own environment has none")

TORCH_TWIN = "# In PyTorch\nimport torch\nx = torch.ones(2)\nprint(x)"


@pytest.fixture
def kernel():
    """A fresh kernel of this environment, in English whatever the caller's DLTUTOR_LANG."""
    environment = {k: v for k, v in os.environ.items() if k != "DLTUTOR_LANG"}
    manager, client = start_new_kernel(kernel_name="python3", env=environment)
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def run(client, code: str) -> tuple[str, list[dict]]:
    """How a cell running ``code`` ended ("ok" or "error") and what a notebook shows under
    it: its stream, error and display messages' contents, each with its ``msg_type``."""
    shown = []

    def keep(message):
        if message["msg_type"] in ("stream", "error", "display_data", "execute_result"):
            shown.append({"msg_type": message["msg_type"], **message["content"]})

    reply = client.execute_interactive(code, output_hook=keep, timeout=120)
    return reply["content"]["status"], shown


def only_line(status: str, shown: list[dict]) -> str:
    """The one line a cell that succeeded showed; fails on anything else (a traceback above all)."""
    assert status == "ok", shown
    assert [m["msg_type"] for m in shown] == ["stream"], shown
    text = shown[0]["text"]
    assert text.endswith("\n") and text.count("\n") == 1, text
    return text.rstrip("\n")


def test_a_twin_without_pytorch_prints_one_line_that_says_how_to_install_it(kernel):
    assert run(kernel, "import dltutor as dt") == ("ok", [])
    line = only_line(*run(kernel, TORCH_TWIN))
    assert line == twins.note_for("PyTorch")
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in line
    assert "Traceback" not in line and "ModuleNotFoundError" not in line


def test_a_paddle_twin_gets_its_own_line(kernel):
    run(kernel, "import dltutor")
    line = only_line(*run(kernel, "# In Paddle\nimport paddle"))
    assert line == twins.note_for("Paddle") and "pip install paddlepaddle" in line


def test_code_that_is_no_twin_keeps_its_traceback(kernel):
    """Only a twin (its first line names its framework) is explained: a learner's own
    ``import torch`` fails as Python says, as does another missing module."""
    run(kernel, "import dltutor")
    for code, module in [("import torch", "torch"), ("import not_a_module_xyz", "not_a_module_xyz")]:
        status, shown = run(kernel, code)
        errors = [m for m in shown if m["msg_type"] == "error"]
        assert status == "error" and [m["ename"] for m in errors] == ["ModuleNotFoundError"]
        assert module in errors[0]["evalue"] and errors[0]["traceback"]


def test_the_chinese_twin_speaks_chinese(kernel):
    run(kernel, "import dltutor as dt\ndt.set_language('zh')")
    line = only_line(*run(kernel, "# 在 PyTorch 中\nimport torch"))
    with i18n.use_language("zh"):
        assert line == twins.note_for("PyTorch")
    assert "安装" in line


def test_importing_twice_registers_once(kernel):
    run(kernel, "import importlib, dltutor\nimportlib.reload(dltutor)")
    status, shown = run(kernel, "print(sum(getattr(t, '__name__', '') == 'run_or_explain' "
                                "for t in get_ipython().input_transformers_cleanup))")
    assert status == "ok" and shown[0]["text"] == "1\n"
    assert only_line(*run(kernel, TORCH_TWIN)) == twins.note_for("PyTorch")


def test_run_all_goes_past_a_twin_to_the_rest_of_the_lesson(tmp_path):
    """The learner's Run All: a notebook with a twin in the middle runs to its last cell."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import dltutor as dt"),
        nbformat.v4.new_code_cell(TORCH_TWIN),
        nbformat.v4.new_code_cell("print('the lesson goes on')")])
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert nb.cells[1].outputs[0]["text"].startswith(twins.note_for("PyTorch")[:30])
    assert nb.cells[2].outputs[0]["text"] == "the lesson goes on\n"
