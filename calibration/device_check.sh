#!/usr/bin/env bash
# GPU check: the CUDA kernels, calibration and gpu-run on one H200 (or any sm_90 GPU), in under
# 6 minutes:
#   1. builds pipesim and pipesim-gpu for sm_90 in its own build directory
#      (build-device-check) and checks that pipesim links no CUDA library,
#   2. runs the kernel correctness tests ([.gpu]: every kernel of small GPT- and Llama-style
#      layers, unfused and fused attention, against the CPU reference),
#   3. calibrates zb-1.5b (b=6) and zb-6.2b (b=3), the Zero Bubble paper's microbatch sizes
#      (Qi et al., ICLR 2024, Table 3), with the unfused attention (Megatron-LM's path, as
#      models/ counts its FLOPs), zb-1.5b also fused, and llama2-7b (b=1, s=4096: RMSNorm,
#      rotary, SwiGLU) with both attention kernels, on the whole GPU,
#   4. runs 1f1b, zb-h1 and v-half at p=4, m=16 with zb-1.5b b=6 through gpu-run (4 GPUs if
#      there are, else 4 SM partitions of one GPU),
#   5. prints one summary table. Outputs stay in build-device-check/out.
# Usage: calibration/device_check.sh [BUILD_DIR]
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-device-check}
OUT=$BUILD/out
JOBS=$(nproc 2>/dev/null || echo 4)
START=$(date +%s)
mkdir -p "$OUT"
log() { echo "[$(( $(date +%s) - START ))s] $*"; }

log "configure and build (sm_90)"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPIPESIM_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/configure.log" 2>&1 ||
  { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build "$BUILD" -j "$JOBS" --target pipesim pipesim-gpu calibration_tests \
      >"$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -30; exit 1; }
# calibrate and gpu-run go through pipesim, which hands them to pipesim-gpu beside it.
PIPESIM=$BUILD/cli/pipesim
LINK_OK=0
if ldd "$PIPESIM" | grep -i cu; then LINK_OK=1; echo "pipesim links CUDA libraries (above)"; fi
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv 2>/dev/null | tee "$OUT/gpu.txt"

log "kernel correctness tests [.gpu]"
"$BUILD/tests/calibration_tests" "[.gpu]" >"$OUT/gpu_tests.log" 2>&1
GPU_TESTS=$?
grep -E "relative error" "$OUT/gpu_tests.log" >"$OUT/kernels.txt"
tail -4 "$OUT/gpu_tests.log"

declare -a ROWS
CAL_OK=0
# Work per calibration: 35 runs (5 warm-up, 30 timed) of each whole pass and of each kernel
# alone, i.e. ≈ 70 layer passes. llama2-7b at b=1, s=4096 is ≈ 5.8 TFLOP per layer (F+B+W,
# unfused): ≈ 0.4 PFLOP, under 2 s at 300 TFLOP/s; the zb models are smaller. Process start,
# cuBLAS set-up and filling 3 buffer sets (≈ 7 GB for llama2-7b unfused) add a few seconds.
for spec in zb-1.5b:6:unfused zb-1.5b:6:fused zb-6.2b:3:unfused llama2-7b:1:fused \
            llama2-7b:1:unfused; do
  IFS=: read -r model mb attention <<<"$spec"
  name=$model-$attention
  log "calibrate $model b=$mb, $attention attention"
  if timeout 120 "$PIPESIM" calibrate --model "$model" --mb "$mb" --attention "$attention" \
       -o "$OUT/calib-$name.json" >"$OUT/calibrate-$name.txt" 2>"$OUT/calibrate-$name.err"; then
    cat "$OUT/calibrate-$name.txt"
    ROWS+=("$(grep '^summary:' "$OUT/calibrate-$name.txt")")
  else
    CAL_OK=1; echo "calibrate $name failed:"; tail -5 "$OUT/calibrate-$name.err"
  fi
done

RUN_OK=0
for s in 1f1b zb-h1 v-half; do
  log "gpu-run $s p=4 m=16 (zb-1.5b b=6)"
  if timeout 150 "$PIPESIM" gpu-run -s "$s" -p 4 -m 16 --model zb-1.5b --mb 6 --reps 10 \
       --attention unfused \
       --save-timeline "$OUT/gpu-run-$s.json" \
       >"$OUT/gpu-run-$s.txt" 2>"$OUT/gpu-run-$s.err"; then
    cat "$OUT/gpu-run-$s.txt"
    ROWS+=("$(grep '^summary:' "$OUT/gpu-run-$s.txt")")
  else
    RUN_OK=1; echo "gpu-run $s failed:"; tail -5 "$OUT/gpu-run-$s.err"
  fi
done

# One table: the calibration rows, then the schedule rows.
field() { echo "$1" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2; }
echo
echo "=== pipesim device check summary ($(head -2 "$OUT/gpu.txt" | tail -1)) ==="
echo "pipesim without CUDA libraries: $([ $LINK_OK -eq 0 ] && echo yes || echo NO)"
echo "kernel tests: $([ $GPU_TESTS -eq 0 ] && echo passed || echo FAILED); worst kernel errors:"
sort -g -k5 "$OUT/kernels.txt" | tail -3
printf '%-10s %4s %8s %9s %9s %9s %8s %8s %8s %10s %9s %9s\n' model mb attn F_ms B_ms W_ms \
  F_TF/s B_TF/s W_TF/s best_GEMM flash_F flash_B
for r in "${ROWS[@]}"; do
  case "$r" in *model=*)
    printf '%-10s %4s %8s %9s %9s %9s %8s %8s %8s %10s %9s %9s\n' "$(field "$r" model)" \
      "$(field "$r" mb)" "$(field "$r" attention)" "$(field "$r" F_ms)" "$(field "$r" B_ms)" \
      "$(field "$r" W_ms)" "$(field "$r" F_tflops)" "$(field "$r" B_tflops)" \
      "$(field "$r" W_tflops)" "$(field "$r" best_gemm_tflops)" "$(field "$r" flash_F_tflops)" \
      "$(field "$r" flash_B_tflops)";;
  esac
done
printf '%-10s %12s %12s %8s %9s %9s %7s %7s %7s\n' schedule pred_ms meas_ms err_% bub_pred bub_meas F_err B_err W_err
for r in "${ROWS[@]}"; do
  case "$r" in *schedule=*)
    printf '%-10s %12s %12s %8s %9s %9s %7s %7s %7s\n' "$(field "$r" schedule)" \
      "$(field "$r" predicted_ms)" "$(field "$r" measured_ms)" "$(field "$r" error_pct)" \
      "$(field "$r" bubble_pred_pct)" "$(field "$r" bubble_meas_pct)" "$(field "$r" F_err_pct)" \
      "$(field "$r" B_err_pct)$(field "$r" BW_err_pct)" "$(field "$r" W_err_pct)";;
  esac
done
echo "targets: large GEMMs >= 553 TFLOP/s (70% of ~790); |makespan error| <= 5%"
log "done"
[ $GPU_TESTS -eq 0 ] && [ $CAL_OK -eq 0 ] && [ $RUN_OK -eq 0 ] && [ $LINK_OK -eq 0 ]
