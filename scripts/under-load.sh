#!/usr/bin/env bash
# Runs a command (make test-under-load: `make test`) while CPU burners keep
# every core busy, to show the tests wait on states, not durations, and
# pass on a busy machine. SLIPWAY_LOAD_BURNERS sets how many burners run
# (default: one per core). The burners are stopped however the command
# ends; its exit status is returned.
set -u
n=${SLIPWAY_LOAD_BURNERS:-$(nproc)}
pids=()
stop() {
	[ ${#pids[@]} -gt 0 ] || return 0
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	echo "== load: stopped ${#pids[@]} CPU burner(s)"
	pids=()
}
trap stop EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < n; i++)); do
	(while :; do :; done) &
	pids+=($!)
done
echo "== load: ${#pids[@]} CPU burner(s) running (pids ${pids[*]}) during: $*"
"$@"
