#!/usr/bin/env bash
# The GPU check, run on a machine with an NVIDIA GPU, CuPy and a CUDA build of PyTorch
# (benchmarks/RESULTS.md records it): every test that takes the `backend` fixture, with the real
# CuPy backend added, then dltutor's training step against PyTorch's, side by side (agreement
# checked first; full float32 on both). Writes its logs to ${OUT:-.}.
set -uo pipefail
out=${OUT:-.}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt"
python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)" | tee -a "$out/gpu.txt"
# Only the cupy-parametrised cases: the NumPy and marked ones run in CI already.
DLTUTOR_TEST_CUPY=1 PYTHONPATH=. timeout 330 python3 -m pytest -q -p no:cacheprovider -o addopts="" \
  -n 8 -k cupy --timeout=120 \
  tests/test_backend.py tests/data/test_data.py tests/autograd/test_graph_shapes.py \
  tests/nn/test_init.py tests/io/test_io.py tests/io/test_io_tensors.py tests/nn/test_nn.py \
  tests/autograd/test_ops_gradcheck.py tests/optim/test_optim.py tests/nn/test_pooling.py \
  tests/nn/test_tied_parameters.py tests/diagnose/test_clipped_to_zero.py \
  tests/optim/test_fused_steps.py 2>&1 | tail -60 | tee "$out/pytest_cupy.txt"
# NCCL through CuPy: two MPI processes on the machine's GPUs (on one GPU it checks the kit's
# refusal, then skips). It needs mpi4py and an mpiexec, which a bare GPU machine may lack.
if python3 -c "import mpi4py" 2>/dev/null && command -v mpiexec >/dev/null; then
  DLTUTOR_TEST_CUPY=1 PYTHONPATH=. timeout 120 python3 -m pytest -q -p no:cacheprovider -o addopts="" -rs \
    tests/distributed/test_nccl.py -k real_gpus 2>&1 | tail -20 | tee "$out/pytest_nccl.txt"
else
  echo "NCCL test not run: this machine lacks mpi4py or mpiexec (pip install mpi4py mpich)" | tee "$out/pytest_nccl.txt"
fi
CUPY_TF32=0 PYTHONPATH=. timeout 240 python3 benchmarks/gpu_bench.py --device cuda 2>&1 | tee "$out/gpu_bench.txt"
