#!/bin/bash
# CPU time of compiling single command files, the figure issue 14 sets a target for (<= 8 CPU-s for one
# src/cli/cmd_*.cpp): runs each file's compiler command from the build's compile_commands.json (no ccache,
# output to a scratch file) and prints user+system CPU seconds and the preprocessed line count. With --rebuild,
# also the CPU time of rebuilding the binary after touching the file (`cmake --build BUILD_DIR --target edgeplan`:
# compile, archive and link), in a build configured without a compiler launcher (ccache).
#   bench/compile.sh [--rebuild] [BUILD_DIR] [FILE...]   (default: build/dev; cmd_kv cmd_decode cmd_route cmd_profiles)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rebuild=0
if [ "${1:-}" = --rebuild ]; then
  rebuild=1
  shift
fi
build=${1:-$root/build/dev}
shift || true
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(cmd_kv cmd_decode cmd_route cmd_profiles)
[ -f "$build/compile_commands.json" ] || { echo "compile.sh: no $build/compile_commands.json (configure first)" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ $rebuild = 1 ]; then
  if grep -q ccache "$build/compile_commands.json"; then
    echo "compile.sh: $build compiles through ccache; --rebuild needs a build configured without it" >&2
    exit 2
  fi
  cmake --build "$build" --target edgeplan >/dev/null  # up to date, so each figure is the one file's rebuild
fi
for f in "${files[@]}"; do
  python3 - "$build/compile_commands.json" "src/cli/$f.cpp" "$scratch/$f.o" "$scratch/source" >"$scratch/cmd" <<'PY'
import json, shlex, sys
for e in json.load(open(sys.argv[1])):
    if e["file"].endswith(sys.argv[2]):
        args = shlex.split(e["command"])
        args = [a for a in args if a != "ccache" and not a.endswith("/ccache")]
        i = args.index("-o")
        args[i + 1] = sys.argv[3]
        print("cd " + shlex.quote(e["directory"]) + " && " + shlex.join(args))
        open(sys.argv[4], "w").write(e["file"])
        break
else:
    sys.exit("compile.sh: " + sys.argv[2] + " is not in compile_commands.json")
PY
  cpu=$( { /usr/bin/time -f '%U %S' bash "$scratch/cmd" 2>&1 >/dev/null; } | tail -1 | awk '{ printf "%.1f", $1 + $2 }')
  lines=$(bash -c "$(sed 's/ -o [^ ]*/ -E -o -/' "$scratch/cmd")" | wc -l)
  printf '%-16s %6s CPU-s  %7d preprocessed lines' "$f.cpp" "$cpu" "$lines"
  if [ $rebuild = 1 ]; then
    touch "$(cat "$scratch/source")"
    cpu=$( { /usr/bin/time -f '%U %S' cmake --build "$build" --target edgeplan 2>&1 >/dev/null; } | tail -1 |
           awk '{ printf "%.1f", $1 + $2 }')
    printf '  rebuild %5s CPU-s' "$cpu"
  fi
  printf '\n'
done
