#!/bin/bash
# Start-up cost of one edgeplan call against /bin/true (the cost of starting any process here), measured
# side by side: each of RUNS rounds times one `edgeplan kv --device phone8g --model ref-8b` and one /bin/true,
# so both see the same machine load. Prints the medians and their ratio (issue 14's target: at most 1.5x).
#   bench/startup.sh [path/to/edgeplan] [RUNS]     (default: build/release/edgeplan, 200 runs)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/release/edgeplan}
runs=${2:-200}
[ -x "$bin" ] || { echo "startup.sh: no binary at $bin (build the release preset first)" >&2; exit 2; }

# Microseconds since the epoch, from bash itself (no process per reading).
now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

kv=() true_us=()
for ((i = 0; i < runs; i++)); do
  start=$(now_us); "$bin" kv --device phone8g --model ref-8b >/dev/null; end=$(now_us)
  kv+=($((end - start)))
  start=$(now_us); /bin/true; end=$(now_us)
  true_us+=($((end - start)))
done
kv_median=$(printf '%s\n' "${kv[@]}" | median)
true_median=$(printf '%s\n' "${true_us[@]}" | median)
awk -v k="$kv_median" -v t="$true_median" -v n="$runs" 'BEGIN {
  printf "edgeplan kv: median %.2f ms; /bin/true: median %.2f ms (%d calls each, side by side)\n", k / 1000, t / 1000, n
  printf "ratio %.2fx (target <= 1.5x)\n", k / t }'
