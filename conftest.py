"""Settings for the whole test run (unit tests, doctests and the nbval notebook runs)."""
import os

# Notebooks run their short versions of long loops under the tests (see dt.quick_mode());
# kernels that nbval starts inherit this environment.
os.environ["DLTUTOR_QUICK"] = "1"

# The chapters' sources are scripts for jupytext, not modules: nbval runs the built notebooks.
collect_ignore = ["notebooks/src"]
