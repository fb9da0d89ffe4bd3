#!/usr/bin/env bash
# A pipesim sweep spread over the tasks of a Slurm job array, then merged into one file.
#
#   experiments/slurm/sweep_array.sh GRID.json OUT_DIR [TASKS]
#
# submits TASKS array tasks (default 16), each running `pipesim sweep --shard auto` (the
# shard comes from SLURM_ARRAY_TASK_ID/_COUNT/_MIN/_MAX) into OUT_DIR/shard-ID.csv on one
# node's CPUs, and a dependent job that merges the shards into OUT_DIR/results.csv and checks
# that every job of the grid is there. To rerun failed or preempted tasks, submit the same
# command again with the same TASKS: each task resumes its shard file and skips finished rows.
# (Resubmitting one id alone, `sbatch --array=5`, makes a one-task array, which --shard auto
# reads as shard 0 of 1: the whole grid.)
# PIPESIM (default: pipesim on PATH) names the program; SBATCH_ARGS adds sbatch options
# (partition, account, time limit).
set -euo pipefail
if [[ $# -lt 2 ]]; then
    echo "usage: $0 GRID.json OUT_DIR [TASKS]" >&2
    exit 2
fi
grid=$(realpath "$1")
out=$(realpath -m "$2")
tasks=${3:-16}
pipesim=${PIPESIM:-$(command -v pipesim || true)}
[[ -x "$pipesim" ]] || { echo "$0: pipesim not found; set PIPESIM=/path/to/pipesim" >&2; exit 2; }
mkdir -p "$out/logs"

# Each task resumes its own shard file, so requeued or rerun tasks skip finished rows.
array_job=$(sbatch --parsable ${SBATCH_ARGS:-} --array=0-$((tasks - 1)) \
    --job-name=pipesim-sweep --cpus-per-task="${CPUS_PER_TASK:-8}" \
    --output="$out/logs/shard-%a.log" \
    --wrap="\"$pipesim\" sweep \"$grid\" -o \"$out/shard-\$SLURM_ARRAY_TASK_ID.csv\" --shard auto -j \$SLURM_CPUS_PER_TASK --progress lines")

# After every task finished (whatever its exit code), merge and list what is missing.
merge_job=$(sbatch --parsable ${SBATCH_ARGS:-} --dependency=afterany:"$array_job" \
    --job-name=pipesim-merge --output="$out/logs/merge.log" \
    --wrap="\"$pipesim\" merge \"$out\"/shard-*.csv -o \"$out/results.csv\" --grid \"$grid\"")

echo "submitted array job $array_job ($tasks tasks) and merge job $merge_job"
echo "results: $out/results.csv (log: $out/logs/merge.log)"
