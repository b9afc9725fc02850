#!/bin/bash
# A signal that ends edgeplan while it writes --trace-out or bench --write-profile leaves no temporary file, and the
# file it was to replace stays as it was; a file-size limit (ulimit -f) ends in a clean error (exit 2), not SIGXFSZ.
#   bash tests/signals/output_signals.sh EDGEPLAN SOURCE_DIR
# Each run is stopped (SIGSTOP) as soon as its temporary file appears, sent the signal, and continued: the signal
# lands before the run can finish, whatever the machine's speed. Run by ctest (output_signals).
set -eu
bin=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ulimit -c 0  # SIGQUIT would dump core
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# A trace long enough that writing its outcomes takes a while (a million requests, about 140 MB of outcomes).
"$root/scripts/gen-trace" -n 1000000 -s 5 >"$tmp/trace.csv"
# The arguments of COMMAND (route or bench) writing FILE over an existing one.
arguments() {
  case $1 in
    route) echo route --device phone8g --prefill-tok-per-s 180 --decode-tok-per-s 13 --cloud ref-private,ref-public \
      --trace "$tmp/trace.csv" --trace-out "$2" --force ;;
    bench) echo bench --buffer 64MiB --repeats 1 --write-profile "$2" --force ;;
  esac
}

# run_signalled SIGNAL COMMAND: COMMAND (route or bench) writing $tmp/out/target, whose old content must survive.
run_signalled() {
  sig=$1 command=$2
  rm -rf "$tmp/out"
  mkdir "$tmp/out"
  echo "the old target" >"$tmp/out/target"
  # A background job of a script ignores SIGINT and SIGQUIT, and edgeplan keeps an ignored signal ignored: every
  # signal goes back to its default first.
  # shellcheck disable=SC2046 # the arguments hold no spaces (mktemp's folder has none)
  env --default-signal "$bin" $(arguments "$command" "$tmp/out/target") >"$tmp/out.log" 2>&1 &
  pid=$!
  waited=0
  while [ -z "$(find "$tmp/out" -name '*.tmp' 2>/dev/null)" ]; do
    if ! kill -0 "$pid" 2>/dev/null || [ "$waited" -ge 3000 ]; then
      break
    fi
    sleep 0.01
    waited=$((waited + 1))
  done
  kill -STOP "$pid" 2>/dev/null || true
  if [ -z "$(find "$tmp/out" -name '*.tmp')" ]; then
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" || true
    fail "$command $sig: no temporary file appeared while it ran"
    sed 's/^/  /' "$tmp/out.log"
    return
  fi
  kill "-$sig" "$pid"
  kill -CONT "$pid"
  status=0
  before=$failures
  wait "$pid" 2>/dev/null || status=$?
  expected=$((128 + $(kill -l "$sig")))
  [ "$status" -eq "$expected" ] || fail "$command $sig: exit status $status, expected $expected (ended by the signal)"
  left=$(find "$tmp/out" -name '*.tmp')
  [ -z "$left" ] || fail "$command $sig: a temporary file remains: $left"
  [ "$(cat "$tmp/out/target")" = "the old target" ] || fail "$command $sig: the old target was changed"
  [ "$failures" -gt "$before" ] || echo "ok: $command, SIG$sig: no temporary file, the old target intact"
}

for sig in HUP INT QUIT PIPE TERM ALRM USR1 USR2 VTALRM PROF XCPU; do
  run_signalled "$sig" route
done
for sig in INT TERM; do
  run_signalled "$sig" bench
done

# Past a file-size limit of 2 MiB (2048 blocks of 1 KiB), route's outcomes end in a clean error and no temporary file.
rm -rf "$tmp/out"
mkdir "$tmp/out"
echo "the old target" >"$tmp/out/target"
status=0
before=$failures
# shellcheck disable=SC2046
(ulimit -f 2048 && "$bin" $(arguments route "$tmp/out/target")) >/dev/null 2>"$tmp/out.log" || status=$?
[ "$status" -eq 2 ] || fail "ulimit -f: exit status $status, expected 2"
grep -q "File too large" "$tmp/out.log" || fail "ulimit -f: the error does not say the file is too large: $(cat "$tmp/out.log")"
[ -z "$(find "$tmp/out" -name '*.tmp')" ] || fail "ulimit -f: a temporary file remains"
[ "$(cat "$tmp/out/target")" = "the old target" ] || fail "ulimit -f: the old target was changed"
[ "$failures" -gt "$before" ] || echo "ok: ulimit -f: exit 2 ($(head -1 "$tmp/out.log")), no temporary file, the old target intact"

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
