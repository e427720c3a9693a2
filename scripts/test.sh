#!/usr/bin/env bash
# Runs the whole test suite (`swift test`, arguments passed on) and, when it fails, repeats every
# failed test and its recorded issues at the end: the suite's output is long (workers' logs from the
# fault tests), and whoever reads only its tail (a CI summary) must still see what failed.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build
log=.build/test-output.txt
swift test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "=== scripts/test.sh: swift test exited $status; every failed test and issue, from $log ==="
    # An issue's text may run over several lines (its ↳ details among them): print each ✘ line and
    # what follows it, up to the next test event or timestamped log line; a failed suite's ↳ lines
    # are only its doc comment.
    awk '/^✘ Suite/ { show = 0; print; next }
         /^✘/ { show = 1; print; next }
         /^(✔|◇|[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T)/ { show = 0 }
         show { print }' "$log" | grep -v "^✘ Test run with" | head -200
    # A build that failed, or a test process that crashed, says so in lines of its own.
    grep -E ": error: |^(error|fatal error):|Fatal error|Assertion .* failed|unexpected signal|signal [0-9]+" "$log" | head -20
    # A crash ends every running test without a verdict: name the tests that started and never ended.
    awk '/^◇ Test (case|run) / { next }
         /^◇ Test .* started\.$/ { name = $0; sub(/^◇ Test /, "", name); sub(/ started\.$/, "", name); running[name]++; next }
         /^[^ ]+ Test .* (passed|failed) after / { name = $0; sub(/^[^ ]+ Test /, "", name); sub(/( with [0-9]+ test cases?)? (passed|failed) after .*$/, "", name)
                                                   if (running[name] > 0) running[name]-- }
         END { for (name in running) if (running[name] > 0) print "still running when the test process ended: " name }' "$log" | sort | head -40
fi
exit "$status"
