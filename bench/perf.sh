#!/bin/bash
# Performance figures of edgeplan on this machine (not part of the test suite; docs/performance.md records
# them). Uses a Release build:
#   cmake --preset release && cmake --build --preset release --target edgeplan
#   bench/perf.sh [path/to/edgeplan] [RUNS]
# Prints: the median whole-process time of one `edgeplan kv` call against /bin/true over RUNS runs each
# (default 300; via bench/startup.sh), sweep combinations per second (via bench/sweep.sh), trace requests per second at three
# sizes (via bench/route-trace.sh), the time of `inspect` on sparse GGUF files of 2 and 26 layers (5 GB), and `quant` GB/s
# where the build has those commands.
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

echo "== start-up: edgeplan kv against /bin/true, side by side (bench/startup.sh)"
"$root/bench/startup.sh" "$bin" "$runs"

echo "== --sweep: combinations per second (bench/sweep.sh)"
"$root/bench/sweep.sh" "$bin"

echo "== route --trace: requests per second"
"$root/bench/route-trace.sh" "$bin"

echo "== inspect on sparse GGUF files: the time must not depend on the file size"
if has_command inspect; then
  # A llama-shaped GGUF (hidden 4096, GQA 32/8, ffn 11008, vocab 32000, Q8_0 matrices) with LAYERS layers:
  # the header is written, the tensor data is a hole (26 layers make about 5 GB).
  make_gguf() {
    python3 - "$1" "$2" <<'PY'
import struct, sys
path, layers = sys.argv[1], int(sys.argv[2])
hidden, ffn, vocab = 4096, 11008, 32000
def string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b
def kv_u32(key, v):
    return string(key) + struct.pack("<II", 4, v)
tensors = [("token_embd.weight", (hidden, vocab), 8)]
for i in range(layers):
    tensors += [(f"blk.{i}.attn_norm.weight", (hidden,), 0), (f"blk.{i}.attn_q.weight", (hidden, hidden), 8),
                (f"blk.{i}.attn_k.weight", (hidden, 1024), 8), (f"blk.{i}.attn_v.weight", (hidden, 1024), 8),
                (f"blk.{i}.attn_output.weight", (hidden, hidden), 8), (f"blk.{i}.ffn_norm.weight", (hidden,), 0),
                (f"blk.{i}.ffn_gate.weight", (hidden, ffn), 8), (f"blk.{i}.ffn_up.weight", (hidden, ffn), 8),
                (f"blk.{i}.ffn_down.weight", (ffn, hidden), 8)]
tensors += [("output_norm.weight", (hidden,), 0), ("output.weight", (hidden, vocab), 8)]
kvs = [string("general.architecture") + struct.pack("<I", 8) + string("llama"), kv_u32("general.file_type", 7),
       kv_u32("llama.block_count", layers), kv_u32("llama.embedding_length", hidden),
       kv_u32("llama.feed_forward_length", ffn), kv_u32("llama.attention.head_count", 32),
       kv_u32("llama.attention.head_count_kv", 8), kv_u32("llama.context_length", 4096)]
out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
offset = 0
for name, dims, t in tensors:
    rows = dims[1] if len(dims) > 1 else 1
    size = rows * (dims[0] // 32 * 34 if t == 8 else dims[0] * 4)
    out += string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
    out += struct.pack("<IQ", t, offset)
    offset += (size + 31) // 32 * 32
out += bytes((len(out) + 31) // 32 * 32 - len(out))
with open(path, "wb") as f:
    f.write(out)
    f.truncate(len(out) + offset)
PY
  }
  printf '%-7s %15s %12s\n' layers bytes "median ms"
  for layers in 2 26; do
    make_gguf "$tmp/sparse-$layers.gguf" "$layers"
    runs=20 times_ms "$bin" inspect "$tmp/sparse-$layers.gguf" >"$tmp/inspect.ms"
    printf '%-7s %15s %12s\n' "$layers" "$(stat -c %s "$tmp/sparse-$layers.gguf")" "$(median <"$tmp/inspect.ms")"
  done
else
  echo "not measured: this build has no inspect command"
fi

echo "== quant: GB/s of FP32 input (bench/quant.sh, 4096 x 4096)"
if has_command quant; then
  "$root/bench/quant.sh" "$bin" 4096 4096
else
  echo "not measured: this build has no quant command"
fi
