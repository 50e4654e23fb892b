"""Set-up every benchmark module imports first: one BLAS thread, and the package on the path.

Everything runs on one thread: with several BLAS threads the timings of small matrices are
noisy and say more about thread start-up than about the engine. The BLAS library reads these
variables once, when it is loaded, so this module must be imported before NumPy is.
"""
import os
import sys
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

# Let "python benchmarks/engine_bench.py" find the package without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
