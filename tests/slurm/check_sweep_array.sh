#!/usr/bin/env bash
# Runs experiments/slurm/sweep_array.sh against a stand-in `sbatch` that runs what it is given
# at once, as Slurm would on a cluster: each task of an --array with the SLURM_ARRAY_TASK_*
# variables Slurm sets, then the dependent merge job. The merged results must hold every job
# of the grid exactly once, the same rows as one unsharded sweep.
# Usage: check_sweep_array.sh SOURCE_DIR PIPESIM WORK_DIR
set -euo pipefail
source_dir=$1 pipesim=$2 work=$3
rm -rf "$work"
mkdir -p "$work/bin"

cat > "$work/grid.json" <<'GRID'
{"format": "pipesim-sweep", "version": 1, "schedule": ["1f1b", "zb-h1", "v-half"],
 "p": [4, 8], "m_per_p": [2, 3], "costs": [[1, 1, 1], [1, 2, 1]]}
GRID

# sbatch --parsable [--array=MIN-MAX] ... --wrap=COMMAND: runs COMMAND once, or once per array
# task with the task's variables, and prints a job id.
cat > "$work/bin/sbatch" <<'SBATCH'
#!/usr/bin/env bash
set -euo pipefail
array="" command=""
for argument in "$@"; do
    case "$argument" in
        --array=*) array=${argument#--array=} ;;
        --wrap=*) command=${argument#--wrap=} ;;
    esac
done
if [[ -z "$array" ]]; then
    bash -c "$command" > /dev/null 2>&1
else
    min=${array%-*} max=${array#*-}
    for ((id = min; id <= max; ++id)); do
        SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=$min SLURM_ARRAY_TASK_MAX=$max \
        SLURM_ARRAY_TASK_COUNT=$((max - min + 1)) SLURM_CPUS_PER_TASK=1 bash -c "$command" > /dev/null 2>&1
    done
fi
echo $((RANDOM + 1000))
SBATCH
chmod +x "$work/bin/sbatch"

PATH="$work/bin:$PATH" PIPESIM="$pipesim" \
    "$source_dir/experiments/slurm/sweep_array.sh" "$work/grid.json" "$work/out" 3

shards=("$work"/out/shard-*.csv)
[[ ${#shards[@]} -eq 3 ]] || { echo "expected 3 shard files, found ${#shards[@]}"; exit 1; }
"$pipesim" sweep "$work/grid.json" -o "$work/whole.csv" -j 1 --progress none > /dev/null
# 3 schedules × 2 p × 2 m × 2 costs = 24 jobs, each once, as in the unsharded sweep.
rows=$(($(wc -l < "$work/out/results.csv") - 1))
[[ $rows -eq 24 ]] || { echo "merged results hold $rows rows, expected 24"; exit 1; }
# Rows in job order after merging; the unsharded file is in completion order.
if ! diff <(tail -n +2 "$work/out/results.csv" | sort) <(tail -n +2 "$work/whole.csv" | sort) > "$work/diff.txt"; then
    echo "sharded and merged rows differ from one unsharded sweep:"
    head -20 "$work/diff.txt"
    exit 1
fi
echo "Slurm array sweep: 3 shards merged into the 24 rows of the unsharded sweep"
