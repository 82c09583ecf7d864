#!/usr/bin/env bash
# perfring report against perf report --stdio on the same perf.data files
# (>= 1 million samples, recorded by perf itself) in one run.
#
#   bench/report_vs_perf.sh [PERF_DATA [PERF_DATA_G]]
#
# Without arguments it reuses (or records) two files in $BENCH_DIR (default
# /tmp/perfring_bench): perf.data, `perf record -a -e cpu-clock -c 20000` on
# two busy loops for 12 s (no call chains), and perf_g.data, the same with -g
# (frame-pointer call chains). Each tool runs with its defaults (on the -g
# file: children and call graphs) and with --no-children --sort sym; best of
# 3, output to /dev/null. Prints seconds, samples/s and the ratios.
# PERFRING=BIN times a given binary instead of building this tree's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bench_dir="${BENCH_DIR:-/tmp/perfring_bench}"
mkdir -p "$bench_dir"
data="${1:-$bench_dir/perf.data}"
data_g="${2:-$bench_dir/perf_g.data}"
perf=/usr/bin/perf

if [[ -n "${PERFRING:-}" ]]; then  # a given binary (a baseline beside a change)
  perfring="$PERFRING"
else
  bazel build -c opt --config=quiet //cli:perfring >&2
  perfring="$(bazel info -c opt bazel-bin 2>/dev/null)/cli/perfring"
fi

record() {  # record FILE [perf record options...]
  local file="$1"; shift
  if [[ ! -s "$file" ]]; then
    echo "recording $file (12 s, system-wide cpu-clock every 20 us) ..." >&2
    "$perf" record -q -a -e cpu-clock -c 20000 "$@" -o "$file" -- \
      sh -c 'for n in 1 2; do timeout 12 sh -c "while :; do :; done" & done; wait' 2>/dev/null
  fi
}
record "$data"
record "$data_g" -g

samples_of() {  # the "# Samples: N" of perf report's header, exact (-n keeps it in the rows)
  "$perf" report -i "$1" --stdio --no-children --sort comm -n 2>/dev/null |
    awk '/^ +[0-9.]+%/ { n += $2 } END { print n }'
}

declare -A secs_of
time_cmd() {  # time_cmd NAME SAMPLES COMMAND...: best of 3; sets secs_of[NAME]
  local name="$1" samples="$2"; shift 2
  local best=""
  for _ in 1 2 3; do
    local t0 t1 s
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
    if [[ -z "$best" ]] || awk -v s="$s" -v b="$best" 'BEGIN { exit !(s < b) }'; then best=$s; fi
  done
  secs_of[$name]=$best
  printf '%-58s %8.2f s %12.0f samples/s\n' "$name" "$best" \
    "$(awk -v n="$samples" -v s="$best" 'BEGIN { print n / s }')"
}
ratio() { awk -v a="${secs_of[$1]}" -v b="${secs_of[$2]}" 'BEGIN { printf "%.1f", a / b }'; }

for file in "$data" "$data_g"; do
  samples=$(samples_of "$file")
  echo "input: $file, $(du -h "$file" | cut -f1), $samples samples" >&2
  if (( samples < 1000000 )); then
    echo "warning: fewer than 1 million samples; delete $file to record again" >&2
  fi
  base=$(basename "$file")
  time_cmd "perfring report ($base)" "$samples" "$perfring" report -i "$file"
  time_cmd "perf report --stdio ($base)" "$samples" "$perf" report -i "$file" --stdio
  time_cmd "perfring report --no-children --sort sym ($base)" "$samples" \
    "$perfring" report -i "$file" --no-children --sort sym
  time_cmd "perf report --stdio --no-children --sort sym ($base)" "$samples" \
    "$perf" report -i "$file" --stdio --no-children --sort sym
  echo "ratios (time of perf / time of perfring) on $base:"
  echo "  defaults:                  $(ratio "perf report --stdio ($base)" "perfring report ($base)")x"
  echo "  --no-children --sort sym:  $(ratio "perf report --stdio --no-children --sort sym ($base)" "perfring report --no-children --sort sym ($base)")x"
done
