#!/usr/bin/env bash
# Builds the libFuzzer targets in their own build directory (clang, ASan + UBSan + libFuzzer)
# and runs each for a bounded time from the seed corpus in tests/fuzz/corpus/<target>/.
# Fails on any crash, leak, sanitizer report, timeout or out-of-memory; the input that did it
# is left in $BUILD/artifacts/ (turn it into a regression test in tests/test_files_*.cpp).
#
#   tests/fuzz/run.sh                    every target, FUZZ_SECONDS (default 60) each
#   FUZZ_SECONDS=10 tests/fuzz/run.sh fuzz_pytorch_csv
#
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_SECONDS, FUZZ_JOBS (build, default 2).
set -euo pipefail
cd "$(dirname "$0")/../.."

BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-2}
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(fuzz_schedule_json fuzz_pytorch_csv fuzz_model_json
    fuzz_calibration_json fuzz_cluster_json fuzz_sweep_grid fuzz_results_csv fuzz_timeline_json)

if ! command -v clang++ >/dev/null; then
    echo "fuzz: clang++ not found (Debian: clang, libclang-rt-14-dev)" >&2
    exit 1
fi

SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fsanitize=fuzzer-no-link"
LAUNCHER=()  # ccache, when there is one, makes a rebuild after a small change cheap
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
mkdir -p "$BUILD"
cmake -S . -B "$BUILD" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPIPESIM_FUZZ=ON -DPIPESIM_CUDA=OFF "${LAUNCHER[@]}" \
      -DCMAKE_CXX_FLAGS="$SANITIZE -fno-omit-frame-pointer" >"$BUILD/configure.log" 2>&1 ||
    { cat "$BUILD/configure.log" >&2; exit 1; }
# Only the targets asked for, and the libraries they link: not the tool, tests or benchmarks.
cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]}"

mkdir -p "$BUILD/artifacts"
status=0
summary=()
for target in "${TARGETS[@]}"; do
    name=${target#fuzz_}
    work="$BUILD/corpus/$name"  # grows run to run; the seeds stay read-only in the tree
    mkdir -p "$work"
    log="$BUILD/$target.log"
    echo "fuzz: $target for ${SECONDS_EACH}s"
    set +e
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "$BUILD/tests/fuzz/$target" "$work" "tests/fuzz/corpus/$name" \
        -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=1024 -max_len=8192 \
        -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$target-" >"$log" 2>&1
    rc=$?
    set -e
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    if [ $rc -ne 0 ] || grep -qE "ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:|ERROR: libFuzzer" "$log"; then
        echo "fuzz: $target FAILED (exit $rc); log $log" >&2
        grep -E "ERROR|runtime error|SUMMARY|Test unit written" "$log" | head -20 >&2
        status=1
    fi
    summary+=("$target: ${runs:-?} executions, ${rate:-?} exec/s, ${SECONDS_EACH}s, exit $rc")
done
printf 'fuzz: %s\n' "${summary[@]}"
exit $status
