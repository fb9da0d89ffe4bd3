#!/usr/bin/env bash
# Checks the bash completion (cli/completion/pipesim.bash) against the built program: it is
# sourced, then asked what it offers for a few command lines, as bash asks it at a TAB.
# Usage: check_completion.sh COMPLETION_SCRIPT PROGRAM_DIR
set -uo pipefail
source "$1"
PATH="$2:$PATH"
failures=0

# offers WORD... : COMPREPLY after completing the last word of `pipesim WORD...`.
offers() {
    COMP_WORDS=(pipesim "$@")
    COMP_CWORD=$#
    _pipesim
    printf '%s\n' "${COMPREPLY[@]}"
}

# expect DESCRIPTION EXPECTED_WORD WORD... : EXPECTED_WORD is among the offers.
expect() {
    local description=$1 expected=$2
    shift 2
    if ! offers "$@" | grep -xF -- "$expected" >/dev/null; then
        echo "FAIL: $description: '$expected' not offered for 'pipesim $*'; offered: $(offers "$@" | tr '\n' ' ')"
        failures=$((failures + 1))
    fi
}
# refuse DESCRIPTION WORD_NOT_EXPECTED WORD...
refuse() {
    local description=$1 unexpected=$2
    shift 2
    if offers "$@" | grep -xF -- "$unexpected" >/dev/null; then
        echo "FAIL: $description: '$unexpected' offered for 'pipesim $*'"
        failures=$((failures + 1))
    fi
}

expect "subcommand" analyze an
expect "subcommand" simulate ""
expect "subcommand" --version --v
refuse "subcommand prefix" list an
expect "analyze flag" --timeline analyze --ti
expect "analyze flag" --schedule-file analyze --schedule-f
expect "simulate flag" --cluster simulate --clu
refuse "flags of another command" --cluster analyze --clu
expect "schedule name" zb-h1 analyze -s zb-h
expect "schedule list for compare" 1f1b,zb-v compare -s 1f1b,zb-
expect "model name" llama3-8b analyze --model llama3-
expect "GPU name" h100-sxm analyze --gpu h1
expect "cluster name" dgx-h100 simulate --cluster dgx-h
# Only the flags a command defines: a flag its help's prose names is another command's.
expect "merge flag" --grid merge --gr
refuse "a flag merge's prose names" --shard merge --sh
refuse "a flag search's prose names" --dp search --d
refuse "a flag search's prose names" --timeline search --ti
expect "short flag" -o render -

if ((failures > 0)); then
    echo "$failures completion check(s) failed"
    exit 1
fi
echo "bash completion: all checks passed"
