#!/usr/bin/env bash
# Installs the Debian packages dynamix needs (if missing) and builds it into build/.
# Sourced by scripts/quickstart.sh and scripts/test.sh. A script that runs only part of what
# dynamix builds names those ninja targets in the array build_targets before sourcing this file
# (the quick start: the two executables); without it everything is built, tests and benchmarks
# included, with the pinned Gymnasium the tests use.
set -euo pipefail
build_targets=("${build_targets[@]}")

packages=(
  g++ meson ninja-build pkg-config cmake python3 clang-tidy
  libboost-graph-dev libboost-program-options-dev libyaml-cpp-dev
  libbenchmark-dev doctest-dev libopenblas-dev libtorch-dev python3-torch
  libgrpc++-dev protobuf-compiler-grpc python3-grpcio python3-protobuf
  python3-nbclient python3-nbconvert python3-matplotlib python3-pandas python3-ipykernel
  pybind11-dev python3-dev python3-numpy python3-yaml python3-venv
)
# The whole build also spreads sweep, evaluate and train over MPI ranks, and its tests run them
# under mpirun on this host, the network study's smoke (scripts/tcp_study.py: network
# namespaces, tc, nftables, ethtool) and the sim-to-real smoke of the digits CNN (scikit-learn's
# bundled digits).
if ((${#build_targets[@]} == 0)); then
  packages+=(libboost-mpi-dev openmpi-bin iproute2 nftables ethtool python3-sklearn)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    as_root=(sudo)
  else
    echo "dynamix: missing Debian packages (install them as root): ${missing[*]}" >&2
    exit 2
  fi
  echo "dynamix: installing ${missing[*]}" >&2
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
  reconfigure=1
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# The pinned Gymnasium in .venv, which sees Debian's numpy and torch, for the python_gymnasium
# test's gymnasium.utils.env_checker.check_env; without PyPI the test runs its own checks only.
gymnasium_pin=1.4.0
if ((${#build_targets[@]} == 0)) && ! .venv/bin/python3 -c "import gymnasium, sys; sys.exit(gymnasium.__version__ != '$gymnasium_pin')" \
    2>/dev/null; then
  if ! { /usr/bin/python3 -m venv --system-site-packages .venv &&
    .venv/bin/pip install -q --disable-pip-version-check --timeout 20 --retries 1 "gymnasium==$gymnasium_pin"; } >&2; then
    echo "dynamix: could not install gymnasium==$gymnasium_pin into .venv (is PyPI reachable?)" >&2
  fi
fi
# stable-baselines3 in .venv-sb3 for the python_sb3 test and scripts/sb3.sh (a script that builds
# only part sets with_sb3=1 to have it): pinned by hash, without its dependencies, so that it runs
# on Debian's torch and numpy (scripts/sb3-requirements.txt says why).
if { ((${#build_targets[@]} == 0)) || [[ -n ${with_sb3:-} ]]; } &&
  ! cmp -s scripts/sb3-requirements.txt .venv-sb3/requirements.txt; then
  if { /usr/bin/python3 -m venv --system-site-packages .venv-sb3 &&
    .venv-sb3/bin/pip install -q --disable-pip-version-check --timeout 20 --retries 1 \
      --no-deps --require-hashes -r scripts/sb3-requirements.txt; } >&2; then
    cp scripts/sb3-requirements.txt .venv-sb3/requirements.txt
  else
    echo "dynamix: could not install stable-baselines3 into .venv-sb3 (is PyPI reachable?)" >&2
  fi
fi
# DYNAMIX_WERROR=1 (CI) turns every compiler warning into an error.
if [[ ! -f build/build.ninja ]]; then
  meson setup build --buildtype=release -Db_ndebug=false ${DYNAMIX_WERROR:+-Dwerror=true} >/dev/null
elif [[ -n ${reconfigure:-} ]]; then
  # Packages just installed (MPI after a quick start) are found only by a new configuration.
  meson setup --reconfigure build ${DYNAMIX_WERROR:+-Dwerror=true} >/dev/null
elif [[ -n ${DYNAMIX_WERROR:-} ]]; then
  meson configure build -Dwerror=true >/dev/null
fi
# Builds quietly, showing the compiler's output only when the build fails.
build_quietly() {
  local log
  log=$(mktemp)
  if ! ninja -C "$@" -j"$(nproc)" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "dynamix: the build in $1 failed (output above)" >&2
    exit 1
  fi
  rm -f "$log"
}
build_quietly build "${build_targets[@]}"
