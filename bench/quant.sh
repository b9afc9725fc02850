#!/bin/sh
# Quantizer throughput: GB/s of FP32 input that `edgeplan quant` quantizes, dequantizes and measures (errors
# and W.x for one input), on one thread and on all cores. Not part of the test suite: timings vary.
#   bench/quant.sh [BINARY] [ROWS] [COLS]
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/dev/edgeplan}
rows=${2:-4096}
cols=${3:-4096}
for threads in 1 "$(nproc)"; do
  echo "== $rows x $cols, $threads thread(s): GB/s of FP32 input"
  "$bin" quant --rows "$rows" --cols "$cols" --inputs 1 --threads "$threads" --timing --format csv |
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "fp32_gbps") c = i; next } { printf "%-18s %8.2f\n", $1, $c }'
done
