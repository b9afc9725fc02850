#!/bin/bash
# Performance figures of edgeplan on this machine (not part of the test suite; docs/performance.md records
# them). Uses a Release build:
#   cmake --preset release && cmake --build --preset release --target edgeplan
#   bench/perf.sh [path/to/edgeplan] [RUNS]
# Prints: the median whole-process time of one `edgeplan kv` call over RUNS runs (default 300; the target
# is under 5 ms), sweep evaluations per second, trace requests per second at three sizes (via
# bench/route-trace.sh), the time of `inspect` on a sparse 5 GB GGUF and `quant` GB/s where the build has
# those commands.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/release/edgeplan}
runs=${2:-300}
[ -x "$bin" ] || { echo "perf.sh: no binary at $bin (build the release preset first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Seconds since the epoch with microseconds, from bash itself (no process per reading).
now() { echo "${EPOCHREALTIME/,/.}"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
has_command() { "$bin" "$1" --help >/dev/null 2>&1; }

# Milliseconds of each of $runs runs of a command, one per line.
times_ms() {
  for ((i = 0; i < runs; i++)); do
    start=$(now)
    "$@" >/dev/null
    end=$(now)
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f\n", (e - s) * 1000 }'
  done
}

echo "== edgeplan kv: whole process, $runs runs (and /bin/true, the cost of starting any process here)"
times_ms "$bin" kv --device phone8g --model ref-8b >"$tmp/kv.ms"
times_ms /bin/true >"$tmp/true.ms"
printf 'edgeplan kv: median %s ms, min %s ms (target < 5 ms)\n' "$(median <"$tmp/kv.ms")" "$(sort -g "$tmp/kv.ms" | head -1)"
printf '/bin/true:   median %s ms, min %s ms\n' "$(median <"$tmp/true.ms")" "$(sort -g "$tmp/true.ms" | head -1)"

echo "== --sweep: evaluations per second"
printf '%-8s %-12s %10s %14s\n' command evaluations seconds evals/s
for spec in "kv 1:100.99:0.01" "decode 1:100.99:0.01" "kv 1:1000.9:0.01"; do
  set -- $spec
  n=$(awk -v r="$2" 'BEGIN { split(r, a, ":"); printf "%d", (a[2] - a[1]) / a[3] + 1 + 1e-9 }')
  start=$(now)
  "$bin" "$1" --device phone8g --model ref-8b --sweep "device.bandwidth_gbps=$2" --format csv >/dev/null
  end=$(now)
  awk -v c="$1" -v n="$n" -v s="$start" -v e="$end" \
    'BEGIN { d = e - s; printf "%-8s %-12d %10.3f %14.0f\n", c, n, d, n / d }'
done

echo "== route --trace: requests per second"
"$root/bench/route-trace.sh" "$bin"

echo "== inspect on a sparse 5 GB GGUF"
if has_command inspect; then
  # One F32 tensor of 1,342,177,280 weights (5 GiB of data) after a 64-byte header; the data is a hole.
  python3 - "$tmp/sparse.gguf" <<'PY'
import struct, sys
name = b"w"
head = b"GGUF" + struct.pack("<IQQ", 3, 1, 0) + struct.pack("<Q", len(name)) + name
head += struct.pack("<IQIQ", 1, 1342177280, 0, 0)
head += bytes((32 - len(head) % 32) % 32)
with open(sys.argv[1], "wb") as f:
    f.write(head)
    f.truncate(len(head) + 1342177280 * 4)
PY
  runs=20 times_ms "$bin" inspect "$tmp/sparse.gguf" >"$tmp/inspect.ms"
  printf 'file %s bytes: median %s ms over 20 runs\n' "$(stat -c %s "$tmp/sparse.gguf")" "$(median <"$tmp/inspect.ms")"
else
  echo "not measured: this build has no inspect command"
fi

echo "== quant: GB/s"
if has_command quant; then
  echo "not measured yet: this script does not know quant's options (add its run here)"
else
  echo "not measured: this build has no quant command"
fi
