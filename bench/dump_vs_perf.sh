#!/usr/bin/env bash
# perfring dump against perf script and perf data convert --to-json, on the
# same perf.data (>= 1 million samples, recorded by perf itself) in one run.
#
#   bench/dump_vs_perf.sh [PERF_DATA]
#
# Without an argument it reuses (or records) $BENCH_DIR/perf.data
# (default /tmp/perfring_bench): `perf record -a -e cpu-clock -c 20000` on
# two busy loops for 12 s. Prints records/s for each tool and the ratios.
# Uses `perfring dump` (//cli:perfring) when the CLI has it, else
# //bench:dump_tool (the same perfdata::RunDump).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bench_dir="${BENCH_DIR:-/tmp/perfring_bench}"
mkdir -p "$bench_dir"
data="${1:-$bench_dir/perf.data}"
perf=/usr/bin/perf

# --- the dumper --------------------------------------------------------------
if bazel build -c opt //cli:perfring >/dev/null 2>&1 &&
   "$(bazel info -c opt bazel-bin 2>/dev/null)/cli/perfring" dump --help >/dev/null 2>&1; then
  dumper=("$(bazel info -c opt bazel-bin 2>/dev/null)/cli/perfring" dump)
  dumper_name="perfring dump"
else
  bazel build -c opt //bench:dump_tool >/dev/null 2>&1
  dumper=("$(bazel info -c opt bazel-bin 2>/dev/null)/bench/dump_tool")
  dumper_name="dump_tool (RunDump)"
fi

# --- the input ---------------------------------------------------------------
count_samples() { "${dumper[@]}" "$1" | grep -c '"type":"SAMPLE"' || true; }
if [[ ! -s "$data" ]]; then
  echo "recording $data (12 s, system-wide cpu-clock every 20 us) ..." >&2
  "$perf" record -q -a -e cpu-clock -c 20000 -o "$data" -- \
    sh -c 'for n in 1 2; do timeout 12 sh -c "while :; do :; done" & done; wait' 2>/dev/null
fi
samples=$(count_samples "$data")
records=$("${dumper[@]}" "$data" | wc -l)
echo "input: $data, $(du -h "$data" | cut -f1), $samples samples, $records records" >&2
if (( samples < 1000000 )); then
  echo "warning: fewer than 1 million samples; delete $data to record again" >&2
fi

# --- timing ------------------------------------------------------------------
# time_cmd NAME COMMAND...: best of 2 runs, output to /dev/null; sets $secs.
declare -A secs_of
time_cmd() {
  local name="$1"; shift
  local best=""
  for _ in 1 2; do
    local t0 t1 s
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    s=$(echo "$t1 - $t0" | bc -l)
    if [[ -z "$best" ]] || (( $(echo "$s < $best" | bc -l) )); then best=$s; fi
  done
  secs_of[$name]=$best
  printf '%-44s %8.2f s %12.0f samples/s\n' "$name" "$best" "$(echo "$samples / $best" | bc -l)"
}

json_out="$bench_dir/convert.json"
fields=time,pid,tid,cpu,ip,period,event
time_cmd "$dumper_name (JSON Lines)" "${dumper[@]}" "$data"
time_cmd "$dumper_name --format perf-json" "${dumper[@]}" --format perf-json "$data"
time_cmd "perf script -F $fields -G" "$perf" script -i "$data" -F "$fields" -G --ns
time_cmd "perf script (default fields)" "$perf" script -i "$data"
time_cmd "perf data convert --to-json" "$perf" data convert -f --to-json "$json_out" -i "$data"
rm -f "$json_out"

ratio() { echo "scale=1; ${secs_of[$1]} / ${secs_of[$2]}" | bc -l; }
echo "ratios (time of peer / time of ours):"
echo "  perf script -F $fields -G  / dump JSON Lines: $(ratio "perf script -F $fields -G" "$dumper_name (JSON Lines)")x"
echo "  perf script (default)      / dump JSON Lines: $(ratio "perf script (default fields)" "$dumper_name (JSON Lines)")x"
echo "  perf data convert --to-json / dump perf-json: $(ratio "perf data convert --to-json" "$dumper_name --format perf-json")x"
