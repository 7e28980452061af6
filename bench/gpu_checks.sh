#!/usr/bin/env bash
# The checks that need a real NVIDIA GPU, in one run: the GPU-only tests (every hand CUDA
# workload, random GPU schedules, a tune with LocalRunner, the GPU tutorials as written,
# and the compile tests, since the NVRTC there may differ from the one here)
# and the tuned section of bench_gpu.py, measured with CUDA events against PyTorch.
#
#     bench/gpu_checks.sh OUT_DIR [TRIALS]      (python: $PYTHON, else python3)
#
# Needs numpy, llvmlite, scikit-learn, pytest, pytest-xdist, hypothesis, and pycuda or
# cuda-python; PyTorch is the optional peer. Logs and the bench's JSON go to OUT_DIR.
set -u
out=${1:?usage: bench/gpu_checks.sh OUT_DIR [TRIALS]}
trials=${2:-32}
py=${PYTHON:-python3}
mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
$py -m ansor_lab.cli info 2>&1 | tee -a "$out/gpu.txt"
timeout "${TESTS_TIMEOUT:-300}" $py -m pytest -q -n "${WORKERS:-8}" -rs -m "not slow" -p no:cacheprovider \
    tests/codegen/test_cuda_on_gpu.py tests/codegen/test_cuda_driver.py tests/codegen/test_cuda_compile.py \
    tests/codegen/test_gpu_targets.py tests/codegen/test_cuda_nan.py tests/runtime/test_cuda_module.py \
    tests/measure/test_cuda_measure.py tests/fuzz/test_gpu_device_fuzz.py \
    tests/search/test_cuda_tune_on_gpu.py tests/tutorials/test_conv2d_cuda_tutorial.py \
    "tests/tutorials/test_tutorials.py::test_tutorial_runs_after_the_import_swap[blitz_tensorir.py]" \
    2>&1 | tee "$out/tests.log"
timeout "${BENCH_TIMEOUT:-240}" $py bench/bench_gpu.py --section tuned --trials "$trials" \
    --json "$out/bench.json" 2>&1 | tee "$out/bench.log"
