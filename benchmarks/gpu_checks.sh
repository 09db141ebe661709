#!/usr/bin/env bash
# Every GPU figure the docs quote, and the CUDA tests, in one run (about 6 minutes on one
# H100, most of it making the synthetic features). Run from the project root on a machine with
# CUDA; aflite need not be installed (src/ is put on the path). Each step has its own time
# limit, so one that hangs does not cost the rest.
#
#     bash benchmarks/gpu_checks.sh 2>&1 | tee gpu.log
export PYTHONPATH=$PWD/src:$PWD/benchmarks${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
start=$SECONDS
step() { echo "=== $1 ($((SECONDS - start)) s)"; }
quiet() { grep -v "^filtering: phase"; }
step "machine"; nvidia-smi -L; python3 -c "import torch, numpy; print(torch.__version__, numpy.__version__)"
step "CUDA tests"; timeout 150 python3 -m pytest -q -s -m gpu tests/test_gpu.py -p no:cacheprovider 2>&1 | tail -25
step "SNLI scale, logistic"; timeout 70 python3 benchmarks/bench_snli_scale.py 2>&1 | quiet
step "SNLI scale, exact family"; timeout 70 python3 benchmarks/bench_snli_scale.py --model ridge 2>&1 | quiet
step "the demo twice on CUDA, once on the CPU: the same kept set"
for out in cuda1 cuda2; do timeout 60 python3 -m aflite demo --quiet --out-dir "/tmp/demo-$out" 2>&1 | grep fingerprint; done
CUDA_VISIBLE_DEVICES= timeout 60 python3 -m aflite demo --quiet --out-dir /tmp/demo-cpu 2>&1 | grep fingerprint
step "the paper's schedule, its first 40 phases"; timeout 60 python3 benchmarks/bench_snli_scale.py --schedule paper --target 530000 2>&1 | quiet
step "two phases profiled"; timeout 80 python3 benchmarks/bench_gpu_profile.py --rows 16 2>&1 | cut -c1-160
step "N=2,000,000"; timeout 110 python3 benchmarks/bench_snli_scale.py --n 2000000 2>&1 | quiet
step "done"
