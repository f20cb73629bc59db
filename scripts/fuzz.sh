#!/usr/bin/env bash
# Runs every native fuzz target in the module for the given time each
# (default 10s; `make fuzz` runs them longer).
#
# Minimisation of each new interesting input is capped at one second: Go's
# default (60s) lets both workers sit minimising for the whole run, which
# reports 0 execs/s and can end in the engine's own "context deadline
# exceeded" rather than a finding. A run that fails without writing a failing
# input is such an engine error and is retried once; a failing input always
# fails the script.
set -euo pipefail
time=${1:-10s}
status=0

fuzz_once() { # pkg target log
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$time" -fuzzminimizetime 1s "$1" 2>&1 | tee "$3"
  return "${PIPESTATUS[0]}"
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
while IFS= read -r file; do
  pkg=./$(dirname "$file")
  for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)' "$file" | awk '{print $2}'); do
    echo "fuzz $pkg $target ($time)"
    if fuzz_once "$pkg" "$target" "$log"; then continue; fi
    if grep -q 'Failing input written to' "$log"; then status=1; continue; fi
    echo "fuzz $pkg $target: the engine failed without a failing input; retrying once"
    fuzz_once "$pkg" "$target" "$log" || status=1
  done
done < <(grep -rlE '^func Fuzz' --include='*_test.go' . | sort)
exit $status
