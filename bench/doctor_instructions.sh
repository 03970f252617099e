#!/usr/bin/env bash
# Instructions per MLP training step with graft.doctor off / tier 0 / tier 1, counted by
# valgrind's callgrind (stable when wall time is not): each mode runs twice, with 2 and with 7
# timed steps after the same warm-up, and the difference over 5 steps is the per-step count.
#   bench/doctor_instructions.sh <doctor_overhead binary>              (C++)
#   bench/doctor_instructions.sh --python <PYTHONPATH of the package>  (Python: bench/doctor_overhead.py --count)
#   bench/doctor_instructions.sh --programs <PYTHONPATH> ["digits chartf lstm"]  (bench/doctor_programs.py)
set -euo pipefail
count() {  # prints the total instructions of one run
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" > /dev/null 2>&1
  grep -E '^summary:' "$out" | awk '{print $2}'
  rm -f "$out"
}
export OPENBLAS_NUM_THREADS=1
export PYTHONHASHSEED=0  # string hashes (set and dict order) change the count by 0.5% from run to run otherwise
here=$(dirname "$0")
if [ "${1:-}" = "--programs" ]; then  # the step loops of real programs (bench/doctor_programs.py)
  export PYTHONPATH=$2
  for program in ${3:-digits chartf lstm}; do
    base=""
    for m in off counters default; do
      a=$(count /usr/bin/python3 "$here/doctor_programs.py" --count "$program" "$m" 2)
      b=$(count /usr/bin/python3 "$here/doctor_programs.py" --count "$program" "$m" 7)
      n=$(( (b - a) / 5 ))
      [ -z "$base" ] && base=$n
      printf "  %-7s %-9s %14d instructions/step   ratio %s\n" "$program" "$m" "$n" \
        "$(awk -v a="$n" -v b="$base" 'BEGIN{printf "%.4f", a/b}')"
    done
  done
  exit 0
fi
if [ "${1:-}" = "--python" ]; then
  export PYTHONPATH=$2
  modes=(off tier0 tier1 tier1+cycles)
  run() { count /usr/bin/python3 "$here/doctor_overhead.py" --count "$1" "$2"; }
else
  bin=$1
  modes=(0 1 2)
  run() { count "$bin" --count "$1" "$2"; }
fi
per_step() { local a b; a=$(run "$1" 2); b=$(run "$1" 7); echo $(( (b - a) / 5 )); }
base=""
for m in "${modes[@]}"; do
  n=$(per_step "$m")
  [ -z "$base" ] && base=$n
  printf "  %-13s %14d instructions/step   ratio %s\n" "$m" "$n" "$(awk -v a="$n" -v b="$base" 'BEGIN{printf "%.4f", a/b}')"
done
