"""Settings for the whole test run (unit tests, doctests and the nbval notebook runs)."""
import os

import pytest

# Notebooks run their short versions of long loops under the tests (see dt.quick_mode());
# kernels that nbval starts inherit this environment.
os.environ["DLTUTOR_QUICK"] = "1"

# The chapters' sources are scripts for jupytext, not modules: nbval runs the built notebooks.
collect_ignore = ["notebooks/src"]


@pytest.hookimpl(tryfirst=True)   # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Keep each notebook's cells together on one worker when pytest-xdist runs the suite in
    parallel (``-n 2 --dist loadgroup``): nbval runs them in order in one kernel."""
    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            item.add_marker(pytest.mark.xdist_group(str(item.fspath)))
