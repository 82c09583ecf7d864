#!/usr/bin/env bash
# Installs what perfring needs to build and test, from Debian's packages only.
# Idempotent: installs nothing when everything is present; needs root otherwise.
set -euo pipefail

packages=(
  bazel-bootstrap      # Bazel 4.2.3 (offline build; stand-ins in third_party/)
  g++                  # GCC 12, C++17
  libabsl-dev          # absl::Status, StrFormat, ...
  libgtest-dev libgmock-dev
  nlohmann-json3-dev
  libbenchmark-dev
  libzstd-dev          # perf.data COMPRESSED records
  libelf-dev           # build-ids
  libdw-dev            # symbolize/: ELF symbols, DWARF unwinding and source lines (elfutils)
  zlib1g-dev           # report/: gzip-compressed pprof
  protobuf-compiler libprotobuf-dev  # report/: pprof's profile.proto
  golang-go            # tests: go tool pprof reads perfring's pprof export
  nodejs               # tests: the flame graph SVG's script run against a stand-in DOM
  librsvg2-bin         # rsvg-convert: docs/flamegraph.svg drawn to PNG to look at it
  linux-perf           # the peer: perf 6.1 reads our files, we read its files
  libipt-dev           # Intel PT packet encoder/decoder: the external decoder AUX hand-off is tested against
  libopencsd-dev       # CoreSight trace decoder (OpenCSD): the same for ETM streams
  libbpf-dev           # bpf/: loads the BPF programs (libbpf 1.1); perfring consumes the buffers itself
  bpftool              # bpf/: inspecting loaded programs and maps by hand
  clang llvm           # bpf/: compiles bpf/*.bpf.c at build time (clang -target bpf)
  python3              # scripts/test counts test cases from Bazel's XML; bench/overhead.sh's tables
  gnuplot-nox          # bench/overhead.sh and bench/bpf_compare.sh draw docs/*.png
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: need root to install ${missing[*]} (run as root or install them)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
