# bash completion for pipesim: subcommands, each command's flags, and the names its flags take
# (schedules, models, GPUs, clusters), read from the installed program itself (`pipesim
# --help`, `pipesim COMMAND --help`, `pipesim list`) so that they never drift from it.
# Installed as share/bash-completion/completions/pipesim; or `source cli/completion/pipesim.bash`.

# The names listed under `pipesim list`'s section whose heading starts with $2.
_pipesim_listed_names() {
    "$1" list 2>/dev/null | awk -v heading="$2" '
        /^[^ ]/ { in_section = (index($0, heading) == 1); next }
        in_section && /^  [^ ]/ { print $1 }'
}

_pipesim() {
    local cur prev program command
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    program="${COMP_WORDS[0]}"

    if [[ ${COMP_CWORD} -eq 1 ]]; then
        local commands
        commands=$("${program}" --help 2>/dev/null | awk '
            /^commands:/ { in_commands = 1; next }
            /^[^ ]/ { in_commands = 0 }
            in_commands && /^  [a-z]/ { print $1 }' | sort -u)
        COMPREPLY=($(compgen -W "${commands} --help --version" -- "${cur}"))
        return 0
    fi
    command="${COMP_WORDS[1]}"

    case "${prev}" in
        -s | --schedule | --schedules)
            # compare takes a comma-separated list: complete the name after the last comma.
            local names head="" tail="${cur}"
            names=$(_pipesim_listed_names "${program}" "schedules")
            if [[ "${cur}" == *,* ]]; then
                head="${cur%,*},"
                tail="${cur##*,}"
            fi
            COMPREPLY=($(compgen -P "${head}" -W "${names}" -- "${tail}"))
            return 0 ;;
        --model)
            COMPREPLY=($(compgen -W "$(_pipesim_listed_names "${program}" "models")" -- "${cur}")
                       $(compgen -f -X '!*.json' -- "${cur}"))
            return 0 ;;
        --gpu)
            COMPREPLY=($(compgen -W "$(_pipesim_listed_names "${program}" "GPUs")" -- "${cur}")
                       $(compgen -f -X '!*.json' -- "${cur}"))
            return 0 ;;
        --cluster)
            COMPREPLY=($(compgen -W "$(_pipesim_listed_names "${program}" "clusters")" -- "${cur}")
                       $(compgen -f -X '!*.json' -- "${cur}"))
            return 0 ;;
        --progress)
            COMPREPLY=($(compgen -W "auto bar lines none" -- "${cur}"))
            return 0 ;;
        --recompute)
            COMPREPLY=($(compgen -W "none selective full" -- "${cur}"))
            return 0 ;;
        --grad-dtype)
            COMPREPLY=($(compgen -W "fp32 bf16 fp16" -- "${cur}"))
            return 0 ;;
        --nccl-algo)
            COMPREPLY=($(compgen -W "auto ring tree" -- "${cur}"))
            return 0 ;;
    esac

    if [[ "${cur}" == -* ]]; then
        # The flags the help defines: those that start its lines of options ("  -o, --output
        # FILE  ..."), not every --word of its prose ('pipesim sweep --shard' in merge's).
        local flags
        flags=$("${program}" "${command}" --help 2>/dev/null | awk '
            /^  [ ]?[ ]?-/ {
                for (i = 1; i <= NF; i++) {
                    word = $i
                    sub(/,$/, "", word)
                    if (word !~ /^--?[A-Za-z]/) break
                    print word
                }
            }' | sort -u)
        COMPREPLY=($(compgen -W "${flags} --help" -- "${cur}"))
        return 0
    fi
    # Anything else is a file: schedule, block, grid, sweep results, cluster or model files,
    # or an output.
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "${cur}"))
    return 0
}
complete -F _pipesim pipesim
