"""The test suite, one folder per part of dltutor (tests/autograd, tests/nn, ...) plus
tests/notebooks, tests/browser, tests/delivery and tests/frameworks.

Every folder is a package (this file and one ``__init__.py`` each), so test files in different
folders may share a name (tests/nn/test_bad_input.py, tests/optim/test_bad_input.py) under
pytest's default import mode. The shared helpers (gradcheck.py, marked_backend.py,
bad_input.py, exercise_checks.py, browser_helpers.py) are imported by their bare names:
tests/conftest.py puts this folder on ``sys.path``, so a folder here must not take the name of
an installed module (tests/delivery, not tests/packaging, which would hide ``packaging``).
"""
