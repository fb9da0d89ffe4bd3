#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then configures, builds and runs a project
# outside the tree (tests/install/consumer) that finds the libraries with
# find_package(pipesim). Usage: check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build_dir=$1 source_dir=$2 work_dir=$3
rm -rf "$work_dir"
mkdir -p "$work_dir"
prefix="$work_dir/prefix"

cmake --install "$build_dir" --prefix "$prefix" > "$work_dir/install.log"
for installed in bin/pipesim lib/pipesim/pipesim-simgrid.so share/bash-completion/completions/pipesim \
                 lib/cmake/pipesim/pipesimConfig.cmake include/pipesim/analysis/run.hpp; do
    [[ -e "$prefix/$installed" ]] || { echo "not installed: $installed"; exit 1; }
done
version=$("$prefix/bin/pipesim" --version)
[[ "$version" == "pipesim "[0-9]* ]] || { echo "installed pipesim --version printed '$version'"; exit 1; }
# The installed pipesim loads the installed SimGrid engine plugin (PREFIX/lib/pipesim).
"$prefix/bin/pipesim" simulate -s 1f1b -p 2 -m 2 --cluster h200x8 --json > "$work_dir/simulate.json" ||
    { echo "installed pipesim simulate failed"; exit 1; }

cmake -S "$source_dir/tests/install/consumer" -B "$work_dir/consumer" \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$work_dir/configure.log" ||
    { cat "$work_dir/configure.log"; exit 1; }
cmake --build "$work_dir/consumer" > "$work_dir/build.log" 2>&1 ||
    { cat "$work_dir/build.log"; exit 1; }
output=$("$work_dir/consumer/consumer")
echo "consumer: $output"
# 1F1B, p = 4, m = 8, F = B = W = 1: makespan (m + p − 1)(F + B + W) = 33, and every device
# idles (p − 1)(F + B + W) = 9 of it.
expected="makespan 33 bubble 0.272727"
[[ "$output" == "$expected" ]] || { echo "expected '$expected'"; exit 1; }
