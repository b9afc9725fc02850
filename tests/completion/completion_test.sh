#!/bin/bash
# The completion scripts `edgeplan completion SHELL` writes: bash's is sourced and asked what it completes
# (commands, a command's options, built-in profile names after --device and --model, files after a file
# option); zsh's and fish's are syntax-checked when those shells are installed.
#   tests/completion/completion_test.sh path/to/edgeplan
set -u
bin=$1
fail=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$bin" completion bash >"$scratch/edgeplan.bash" || { echo "completion bash failed"; exit 1; }

# What the bash completion offers for the words given (the last one is being completed).
complete_words() {
  bash -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _edgeplan
    printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$scratch/edgeplan.bash" "$@"
}

expect() {  # expect WHAT WANTED WORDS...: the completion of WORDS holds every word of WANTED
  local what=$1 wanted=$2
  shift 2
  local got
  got=$(complete_words "$@")
  for w in $wanted; do
    if [[ " $got" != *" $w "* ]]; then
      echo "FAIL: $what: '$w' not offered for '$*' (got: $got)"
      fail=1
    fi
  done
}
refuse() {  # refuse WHAT UNWANTED WORDS...: the completion of WORDS holds none of UNWANTED
  local what=$1 unwanted=$2
  shift 2
  local got
  got=$(complete_words "$@")
  for w in $unwanted; do
    if [[ " $got" == *" $w "* ]]; then
      echo "FAIL: $what: '$w' offered for '$*' (got: $got)"
      fail=1
    fi
  done
}

expect "commands" "kv decode report fit inspect help" "$bin" ""
expect "commands by prefix" "kv" "$bin" "k"
refuse "commands by prefix" "decode" "$bin" "k"
expect "kv's options" "--device --model --context --kv-type --format --sweep --help" "$bin" kv --
refuse "kv's options" "--prompt --cloud" "$bin" kv --
expect "fit's options" "--context --min-tok-per-s --models --limit" "$bin" fit --
expect "route's options" "--decode-tok-per-s --prefill-tok-per-s --trace-out --force" "$bin" route --
expect "device profiles" "phone8g iphone-15-pro" "$bin" kv --device ""
expect "device profiles by prefix" "phone8g" "$bin" decode --device ph
refuse "device profiles by prefix" "iphone-15-pro" "$bin" decode --device ph
expect "model profiles" "ref-8b" "$bin" kv --device phone8g --model ""
# A model may also be a file, or a model in a store (`edgeplan models`: here an LM Studio folder).
mkdir -p "$scratch/home/.lmstudio/models/pub/Tiny-GGUF" "$scratch/files"
cp "$(dirname "$0")/../data/tiny-llama.gguf" "$scratch/home/.lmstudio/models/pub/Tiny-GGUF/Tiny-Q8_0.gguf"
cp "$(dirname "$0")/../data/tiny-llama.gguf" "$scratch/files/tiny.gguf"
HOME=$scratch/home expect "stored models" "lmstudio:pub/Tiny-GGUF/Tiny-Q8_0.gguf ref-8b" "$bin" kv --model ""
expect "model files" "$scratch/files/tiny.gguf" "$bin" kv --model "$scratch/files/t"
expect "formats" "table json csv md" "$bin" kv --format ""
expect "weight formats" "Q4_K_M Q8_0 MXFP4_MOE" "$bin" decode --quant ""
expect "weight formats by prefix" "Q4_K_M Q4_0" "$bin" decode --quant Q4
expect "KV-cache types" "f16 q8_0 q4_0" "$bin" kv --kv-type ""
expect "help's commands" "kv calibrate" "$bin" help ""
refuse "no value offered for a number" "--device" "$bin" kv --context ""
cd "$scratch" && touch plan-a.toml && expect "files after a file argument" "plan-a.toml" "$bin" check plan-

for shell in zsh fish; do
  "$bin" completion "$shell" >"$scratch/edgeplan.$shell" || { echo "FAIL: completion $shell"; fail=1; }
  if command -v "$shell" >/dev/null; then
    "$shell" -n "$scratch/edgeplan.$shell" || { echo "FAIL: $shell -n"; fail=1; }
  else
    echo "($shell not installed: its script is not syntax-checked)"
  fi
done
if "$bin" completion tcsh >/dev/null 2>&1; then echo "FAIL: completion tcsh should exit 2"; fail=1; fi
[ $fail -eq 0 ] && echo "completion: all checks pass"
exit $fail
