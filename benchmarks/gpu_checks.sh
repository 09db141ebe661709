#!/usr/bin/env bash
# Every GPU figure the docs quote, and the CUDA tests, in one run (about 6 minutes on one
# H100, most of it making the synthetic features). Run from the project root on a machine with
# CUDA; aflite need not be installed (src/ is put on the path). Each step has its own time
# limit, so one that hangs does not cost the rest.
#
#     bash benchmarks/gpu_checks.sh 2>&1 | tee gpu.log
#
# With --smoke (or SMOKE=1) every step runs at the benchmarks' --smoke sizes, on CUDA where
# there is one, and the steps that need CUDA are skipped, with a line, where there is none:
# it checks in seconds, on any machine, that the script runs, and exits 1 if a step failed.
#
#     bash benchmarks/gpu_checks.sh --smoke
export PYTHONPATH=$PWD/src:$PWD/benchmarks${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
smoke=${SMOKE:+1}
[[ "${1:-}" == "--smoke" ]] && smoke=1
start=$SECONDS
step() { echo "=== $1 ($((SECONDS - start)) s)"; }
quiet() { grep -v "^filtering: phase"; }
versions='import torch, numpy; print(torch.__version__, numpy.__version__'
skip() { echo "skipped: no CUDA on this machine"; }
failed=""
if [[ -z $smoke ]]; then
    cuda=1 scale=() paper=(--schedule paper --target 530000) big=(--n 2000000)
    check() { :; }
    step "machine"; nvidia-smi -L; python3 -c "$versions)"
else
    set -o pipefail
    check() { [[ $1 == 0 ]] || failed+=" [$2]"; }
    scale=(--smoke --device auto) paper=(--smoke --device auto --schedule paper)
    big=(--smoke --device auto --n 8000)
    step "machine"
    machine=$(python3 -c "$versions, int(torch.cuda.is_available()))")
    check $? machine
    cuda=${machine##* } && [[ $cuda == 1 ]] || cuda=""
    if [[ -n $cuda ]]; then nvidia-smi -L; else skip; fi
    echo "${machine% *}"
fi
step "CUDA tests"
if [[ -n $cuda ]]; then
    timeout 150 python3 -m pytest -q -s -m gpu tests/test_gpu.py -p no:cacheprovider 2>&1 | tail -25
else skip; fi
step "SNLI scale, logistic"; timeout 70 python3 benchmarks/bench_snli_scale.py "${scale[@]}" 2>&1 | quiet
check $? "SNLI scale, logistic"
step "SNLI scale, exact family"
timeout 70 python3 benchmarks/bench_snli_scale.py "${scale[@]}" --model ridge 2>&1 | quiet
check $? "SNLI scale, exact family"
step "the demo twice on CUDA, once on the CPU: the same kept set"
if [[ -n $cuda ]]; then
    for out in cuda1 cuda2; do timeout 60 python3 -m aflite demo --quiet --out-dir "/tmp/demo-$out" 2>&1 | grep fingerprint; done
    CUDA_VISIBLE_DEVICES= timeout 60 python3 -m aflite demo --quiet --out-dir /tmp/demo-cpu 2>&1 | grep fingerprint
else skip; fi
step "the paper's schedule, its first 40 phases"
timeout 60 python3 benchmarks/bench_snli_scale.py "${paper[@]}" 2>&1 | quiet
check $? "the paper's schedule"
step "two phases profiled"
timeout 80 python3 benchmarks/bench_gpu_profile.py ${smoke:+--smoke} --rows 16 2>&1 | cut -c1-160
check $? "two phases profiled"
step "N=2,000,000"; timeout 110 python3 benchmarks/bench_snli_scale.py "${big[@]}" 2>&1 | quiet
check $? "N=2,000,000"
step "done"
if [[ -n $failed ]]; then
    echo "failed:$failed"
    exit 1
fi
