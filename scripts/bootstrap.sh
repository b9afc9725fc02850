#!/bin/sh
# Sets up a Debian 12 machine for edgeplan and builds it: installs the build tools and libraries from
# Debian packages when any is missing (apt-get, as root or through sudo), then configures and builds a
# CMake preset (default: dev, which includes the tests) on all cores.
#   scripts/bootstrap.sh [PRESET]
set -eu
cd "$(dirname "$0")/.."
preset=${1:-dev}

# The tests need googletest and jsonschema.
packages="cmake g++ make pkg-config libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev libcurl4-openssl-dev"
case $preset in
  release) ;;  # the binary alone: no tests
  asan) packages="$packages libgtest-dev python3 python3-jsonschema clang libclang-rt-14-dev" ;;  # clang's sanitizers, libFuzzer
  *) packages="$packages libgtest-dev python3 python3-jsonschema" ;;
esac
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "bootstrap: installing$missing"
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --parallel "$(getconf _NPROCESSORS_ONLN)"
