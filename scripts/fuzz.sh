#!/usr/bin/env bash
# Runs every native fuzz target in the module for the given time each
# (default 10s; `make fuzz` runs them longer).
set -euo pipefail
time=${1:-10s}
status=0
while IFS= read -r file; do
  pkg=./$(dirname "$file")
  for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)' "$file" | awk '{print $2}'); do
    echo "fuzz $pkg $target ($time)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$pkg" || status=1
  done
done < <(grep -rlE '^func Fuzz' --include='*_test.go' . | sort)
exit $status
