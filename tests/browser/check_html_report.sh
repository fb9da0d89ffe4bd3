#!/bin/sh
# The HTML report in a real browser: `pipesim compare --html` for three schedules, loaded in
# headless Chromium after its script ran; checks the DOM (one table row and one timeline SVG
# per schedule, the legend, tooltips set up by the script, no script errors, nothing fetched
# from the network) and saves a screenshot. A page with a deliberate script error must be
# caught by the same check. Exit 77 (skipped) only where Chromium or Graphviz is missing.
#
# usage: check_html_report.sh PIPESIM OUTPUT_DIR
set -u
pipesim=$1
out=$2
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "SKIP: no Chromium found (Debian: apt-get install chromium); the HTML report was not loaded in a browser"
    exit 77
fi
mkdir -p "$out"
rm -f "$out/report.html" "$out/dom.html" "$out/zoom-dom.html" "$out/broken.html" "$out/broken-dom.html" "$out/html-report.png"

if ! "$pipesim" compare -s 1f1b,zb-h1,zb-v -p 4 -m 8 --html "$out/report.html" >"$out/compare.txt" 2>&1; then
    if grep -q "Graphviz" "$out/compare.txt"; then
        echo "SKIP: this build has no Graphviz, so it writes no HTML report"
        exit 77
    fi
    echo "FAIL: pipesim compare --html failed:"
    cat "$out/compare.txt"
    exit 1
fi

# Root may run this (CI containers): Chromium then needs --no-sandbox; containers often have a
# small /dev/shm, and a HOME that cannot be written.
mkdir -p "$out/home"
run_browser() {
    HOME="$out/home" timeout 40 "$browser" --headless=new --no-sandbox --disable-gpu \
        --disable-dev-shm-usage --disable-extensions --no-first-run \
        --user-data-dir="$out/profile" --virtual-time-budget=3000 "$@" 2>>"$out/chromium.log"
}

status=0
fail() {
    echo "FAIL: $*"
    status=1
}
count() {  # occurrences of a fixed string in a file
    grep -o -F -- "$1" "$2" | wc -l | tr -d ' '
}

run_browser --dump-dom "file://$out/report.html" >"$out/dom.html" || fail "Chromium could not load the page (see $out/chromium.log)"
dom="$out/dom.html"
grep -q 'data-report="ready"' "$dom" || fail "the page's script did not finish (no data-report=\"ready\")"
grep -q 'data-js-errors="0"' "$dom" || fail "script errors: $(grep -o 'data-js-error-text="[^"]*"' "$dom")"
rows=$(sed -n '/<table id="figures-table">/,/<\/table>/p' "$dom" | sed -n '/<tbody>/,/<\/tbody>/p' | grep -o '<tr>' | wc -l | tr -d ' ')
[ "$rows" = 3 ] || fail "figures table has $rows rows, expected 3 (one per schedule)"
for s in 1f1b zb-h1 zb-v; do
    grep -q "<td>$s</td>" "$dom" || fail "no table row for $s"
    grep -q "data-schedule=\"$s\"" "$dom" || fail "no timeline for $s"
done
timelines=$(count '<div class="viewport timeline"><svg' "$dom")
[ "$timelines" = 3 ] || fail "$timelines timeline SVGs, expected 3"
memory=$(count '<svg class="memory"' "$dom")
[ "$memory" = 3 ] || fail "$memory memory charts, expected 3"
grep -q 'id="legend"' "$dom" || fail "no legend"
tips=$(count 'data-tip="F(mb 0' "$dom")
[ "$tips" -ge 3 ] || fail "tooltips not set up by the script ($tips boxes of F mb 0 carry one)"
if grep -q -E '(src|href)="https?:' "$dom"; then fail "the page refers to the network"; fi

# Zoom (asked for by the link) scales every picture by the same factor: the first timeline's
# width doubles.
run_browser --dump-dom "file://$out/report.html#zoom=2" >"$out/zoom-dom.html" || fail "Chromium could not load the zoomed page"
written=$(grep -o '<div class="viewport timeline"><svg width="[0-9.]*pt"' "$out/report.html" | head -1 | grep -o '[0-9.]*pt' | tr -d pt)
zoomed=$(grep -o '<div class="viewport timeline"><svg width="[0-9.]*pt"' "$out/zoom-dom.html" | head -1 | grep -o '[0-9.]*pt' | tr -d pt)
awk -v a="$written" -v b="$zoomed" 'BEGIN { exit !(a > 0 && b > 1.99 * a && b < 2.01 * a) }' ||
    fail "zoom=2: the first timeline is ${zoomed}pt wide, written ${written}pt"
grep -q 'data-js-errors="0"' "$out/zoom-dom.html" || fail "script errors when zoomed"

# The same check must notice a script error.
sed 's|</body>|<script>no_such_function();</script></body>|' "$out/report.html" >"$out/broken.html"
run_browser --dump-dom "file://$out/broken.html" >"$out/broken-dom.html" || fail "Chromium could not load the broken page"
grep -q 'data-js-errors="1"' "$out/broken-dom.html" || fail "a deliberate script error was not recorded"

run_browser --hide-scrollbars --window-size=1400,1000 --screenshot="$out/html-report.png" \
    "file://$out/report.html" >/dev/null || fail "no screenshot"
size=$(wc -c <"$out/html-report.png" 2>/dev/null || echo 0)
[ "$size" -gt 20000 ] || fail "screenshot $out/html-report.png is $size bytes"

[ $status = 0 ] && echo "ok: 3 rows, 3 timelines, 3 memory charts, legend, no script errors; screenshot $out/html-report.png"
exit $status
