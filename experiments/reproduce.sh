#!/bin/sh
# Regenerates every experiments/<name>/report.md from a clean build:
#   experiments/reproduce.sh [BUILD_DIR] [NAME...]      (make reproduce does the same)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-reproduce}
[ $# -gt 0 ] && shift
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPIPESIM_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "${JOBS:-2}" --target reproduce pipesim
"$build/experiments/reproduce/reproduce" --root "$root" -j "${JOBS:-2}" "$@"
