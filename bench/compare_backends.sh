#!/usr/bin/env bash
# Runs bench/backend_workloads under backend:native and backend:malloc alternately, ROUNDS
# times each. Prints the medians of each backend and the median of the per-round ratios
# native/malloc (< 1: the caching allocator is faster). Each native run is paired with the
# malloc run right after it, so bursts of load on a shared machine hit both sides of a pair.
# Usage: bench/compare_backends.sh [build dir] [rounds] [eager ops] [mlp steps]
set -euo pipefail
bin="${1:-build-bench}/bench/backend_workloads"
rounds="${2:-15}"
args=("${3:-200000}" "${4:-10}")
out=$(for ((r = 0; r < rounds; r++)); do
  echo "N $(GRAFT_ALLOC_CONF=backend:native "$bin" "${args[@]}")"
  echo "M $(GRAFT_ALLOC_CONF=backend:malloc "$bin" "${args[@]}")"
done)
echo "$out" | awk -v rounds="$rounds" '
  function median(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { for (i = 2; i < NF; i++) if ($i ~ /_per_/) v[$1, $i, ++c[$1, $i]] = $(i + 1) }
  END {
    split("eager_us_per_op mlp_ms_per_step", keys, " ")
    for (k = 1; k <= 2; k++) {
      f = keys[k]; n = c["N", f]
      for (r = 1; r <= n; r++) { a[r] = v["N", f, r]; b[r] = v["M", f, r]; q[r] = a[r] / b[r] }
      printf "%s native %.4f malloc %.4f ratio %.3f (median of %d per-round native/malloc ratios)\n",
             f, median(a, n), median(b, n), median(q, n), n
    }
  }'
