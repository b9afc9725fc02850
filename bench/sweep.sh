#!/bin/bash
# Sweep throughput of edgeplan on this machine: combinations evaluated per second by decode and kv sweeps
# over device numbers (what docs/performance.md records), whole process, output written as CSV to /dev/null.
# Each size runs on one core (taskset) and on all cores, so the figure shows what the threads add. Then, on all
# cores, sweeps over model numbers (kv, decode, report) and report over device numbers.
#   bench/sweep.sh [path/to/edgeplan]     (default build/release/edgeplan; build the release preset first)
# A combination is one point of the cartesian product of the sweeps: for decode it is the whole formats table
# (three formats, so three rows), for kv the whole types table (eleven cache types, eleven rows).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/release/edgeplan}
[ -x "$bin" ] || { echo "sweep.sh: no binary at $bin (build the release preset first)" >&2; exit 2; }

now() { echo "${EPOCHREALTIME/,/.}"; }
bin_rows() { "$bin" "$1" --device phone8g --model ref-8b --sweep "device.bandwidth_gbps=$2" --format csv | wc -l; }
cores=$(nproc)

printf '%-7s %-6s %12s %10s %9s %16s %12s\n' command cores combinations rows seconds "combinations/s" "rows/s"
for command in decode kv; do
  # Rows per combination, from a one-combination sweep (the timed runs write to /dev/null: counting their
  # output would take a core from edgeplan).
  per=$(("$(bin_rows "$command" 1:1:1)" - 1))
  for n in 10000 100000 1000000; do
    # n bandwidths from 1 GB/s in steps of 0.01 GB/s; the decode table has Q4_K_M, Q8_0 and F16.
    stop=$(awk -v n="$n" 'BEGIN { printf "%.2f", 1 + (n - 1) * 0.01 }')
    for run in one all; do
      if [ "$run" = one ]; then pin=(taskset -c 0); used=1; else pin=(); used=$cores; fi
      start=$(now)
      "${pin[@]}" "$bin" "$command" --device phone8g --model ref-8b --sweep "device.bandwidth_gbps=1:$stop:0.01" \
        --format csv >/dev/null
      end=$(now)
      awk -v c="$command" -v u="$used" -v n="$n" -v r="$((n * per))" -v s="$start" -v e="$end" \
        'BEGIN { d = e - s; printf "%-7s %-6d %12d %10d %9.3f %16.0f %12.0f\n", c, u, n, r, d, n / d, r / d }'
    done
  done
done

# Sweeps over model numbers and report's page, all cores. Model keys: 1,000 layer counts x N ffn widths.
echo
printf '%-7s %-40s %12s %9s %16s\n' command sweep combinations seconds "combinations/s"
other() {
  local command=$1 n=$2
  shift 2
  local sweeps=()
  for s in "$@"; do sweeps+=(--sweep "$s"); done
  start=$(now)
  "$bin" "$command" --device phone8g --model ref-8b "${sweeps[@]}" --format csv >/dev/null
  end=$(now)
  awk -v c="$command" -v w="$*" -v n="$n" -v s="$start" -v e="$end" \
    'BEGIN { d = e - s; printf "%-7s %-40s %12d %9.3f %16.0f\n", c, w, n, d, n / d }'
}
other kv 1000000 model.layers=1:1000:1 model.ffn=8192:9191:1
other decode 100000 model.layers=1:1000:1 model.ffn=8192:8291:1
# A model key before a device key: each worker derives the weight sizes once per model (the last axis varies
# fastest), not once per combination.
other decode 1000000 model.layers=1:100:1 device.bandwidth_gbps=1:100.99:0.01
other report 100000 device.bandwidth_gbps=1:1000.99:0.01
other report 100000 model.layers=1:1000:1 model.ffn=8192:8291:1
other report 100000 model.layers=1:10:1 device.bandwidth_gbps=1:100.99:0.01
# Option axes: each value is a command line, parsed once, with its profiles loaded once; then device numbers.
other decode 1000000 context=1:100000:1000 device.bandwidth_gbps=1:100.99:0.01
other kv 1000000 context=1:100000:1000 device.bandwidth_gbps=1:100.99:0.01
other decode 400000 context=1:4000:1 device.bandwidth_gbps=1:100:1
