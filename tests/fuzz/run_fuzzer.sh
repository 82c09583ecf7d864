#!/usr/bin/env bash
# The test of one fuzz target (tests/fuzz/fuzz.bzl):
#   run_fuzzer.sh FUZZER MODE_FILE DICT CORPUS_DIR
# MODE_FILE says how FUZZER was built. "replay" (GCC build, standalone_main):
# run every input of CORPUS_DIR once. "fuzz" (--config=fuzz, libFuzzer): fuzz
# for FUZZ_SECONDS (default 6) from a copy of CORPUS_DIR; a crash fails the test
# and its input is kept in $TEST_UNDECLARED_OUTPUTS_DIR.
set -euo pipefail
fuzzer="$1" mode="$(cat "$2")" dict="$3" corpus="$4"
if [[ ! -d "$corpus" ]]; then
  echo "no corpus at $corpus" >&2
  exit 1
fi
n=$(find -L "$corpus" -maxdepth 1 -type f | wc -l)
if ((n == 0)); then
  echo "empty corpus at $corpus" >&2
  exit 1
fi
if [[ "$mode" == replay ]]; then
  exec "$fuzzer" "$corpus"
fi
work="${TEST_TMPDIR:-$(mktemp -d)}/corpus"
out="${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR:-/tmp}}"
mkdir -p "$work" "$out"
exec "$fuzzer" -max_total_time="${FUZZ_SECONDS:-6}" -timeout=10 -rss_limit_mb=2048 \
  -dict="$dict" -artifact_prefix="$out/" -print_final_stats=1 "$work" "$corpus"
