#!/bin/sh
# Benchmark of `edgeplan route --trace`: prints requests per second for 10^4, 10^5 and 10^6 requests, from
# CSV and from JSON Lines. Not part of the test suite. Uses a Release build:
#   cmake --preset release && cmake --build --preset release --target edgeplan
#   bench/route-trace.sh [path/to/edgeplan]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/release/edgeplan}
[ -x "$bin" ] || { echo "route-trace.sh: no binary at $bin (build the release preset first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
printf '%-9s %-6s %10s %14s\n' requests format seconds requests/s
for n in 10000 100000 1000000; do
  for format in csv jsonl; do
    file=$tmp/trace-$n.$format
    "$root/scripts/gen-trace" -n "$n" -s 7 -f "$format" >"$file"
    start=$(now)
    "$bin" route --device phone8g --prefill-tok-per-s 180 --decode-tok-per-s 13 --cloud ref-private,ref-public \
      --trace "$file" >/dev/null
    end=$(now)
    awk -v n="$n" -v f="$format" -v s="$start" -v e="$end" \
      'BEGIN { d = e - s; printf "%-9d %-6s %10.3f %14.0f\n", n, f, d, n / d }'
  done
done
