"""The rounding probe really nudges what the kit computes (it once wrapped a method the ops no
longer called, and every notebook passed under it without a single number moved)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# In a fresh process: the probe, once installed, stays for the life of the process.
PROBED_RUN = """
import numpy as np
import dltutor as dt
import rounding_probe
x = dt.tensor([1.1, 2.2, 3.3], requires_grad=True)
plain = dt.exp(x).numpy()
dt.exp(x).sum().backward()
plain_grad = x.grad.numpy().copy()
rounding_probe.install()
x.grad = None
probed = dt.exp(x)
probed.sum().backward()
print((probed.numpy() != plain).any(), (x.grad.numpy() != plain_grad).any(),
      (dt.tensor([1.5]) + 1.0).item() == 2.5)
"""


def test_the_probe_nudges_the_kits_forward_and_backward_but_not_exact_ops():
    run = subprocess.run([sys.executable, "-c", PROBED_RUN], capture_output=True, text=True,
                         cwd=HERE, env={"PYTHONPATH": str(HERE), "PATH": ""}, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "True", "True"], run.stdout
