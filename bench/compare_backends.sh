#!/usr/bin/env bash
# Runs bench/backend_workloads under backend:native and backend:malloc alternately, ROUNDS
# times each, and prints the medians and native/malloc ratios (< 1: the caching allocator
# is faster). Usage: bench/compare_backends.sh [build dir] [rounds]
set -euo pipefail
bin="${1:-build-bench}/bench/backend_workloads"
rounds="${2:-7}"
native=() malloc=()
for ((r = 0; r < rounds; r++)); do
  native+=("$(GRAFT_ALLOC_CONF=backend:native "$bin")")
  malloc+=("$(GRAFT_ALLOC_CONF=backend:malloc "$bin")")
done
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { for l in "$@"; do echo "$l"; done | awk -v f="$F" '{for (i=1;i<NF;i++) if ($i==f) print $(i+1)}' | median; }
for F in eager_us_per_op mlp_ms_per_step; do
  n=$(F=$F field "${native[@]}"); m=$(F=$F field "${malloc[@]}")
  awk -v f=$F -v n="$n" -v m="$m" -v r="$rounds" \
    'BEGIN {printf "%s native %s malloc %s ratio %.3f (native/malloc, median of %d)\n", f, n, m, n/m, r}'
done
