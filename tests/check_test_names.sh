#!/bin/sh
# Fails, naming them, when a test executable has a test case whose name holds a ';'
# (tests/CMakeLists.txt: ctest would run nothing under it).
status=0
for executable in "$@"; do
    # Catch2 2.x exits with the number of test cases listed, so the output is what tells.
    names=$("$executable" --list-test-names-only)
    [ -n "$names" ] || { echo "$executable: lists no test cases"; exit 1; }
    bad=$(printf '%s\n' "$names" | grep ';')
    if [ -n "$bad" ]; then
        printf '%s: test case names with a ";" (ctest cuts them there):\n%s\n' "$executable" "$bad"
        status=1
    fi
done
exit $status
