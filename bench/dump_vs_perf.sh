#!/usr/bin/env bash
# perfring dump against perf script and perf data convert --to-json, on the
# same perf.data (>= 1 million samples, recorded by perf itself) in one run.
#
#   bench/dump_vs_perf.sh [PERF_DATA]
#
# Without an argument it reuses (or records) $BENCH_DIR/perf.data
# (default /tmp/perfring_bench): `perf record -a -e cpu-clock -c 20000` on
# two busy loops for 12 s. Prints records/s for each tool and the ratios.
# perfring dump renders on up to 4 threads by default; it is also timed with
# --threads 1, since perf script is single-threaded.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bench_dir="${BENCH_DIR:-/tmp/perfring_bench}"
mkdir -p "$bench_dir"
data="${1:-$bench_dir/perf.data}"
perf=/usr/bin/perf

# --- the dumper --------------------------------------------------------------
bazel build -c opt --config=quiet //cli:perfring >&2
dumper=("$(bazel info -c opt bazel-bin 2>/dev/null)/cli/perfring" dump)
dumper_name="perfring dump"

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
    s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
    if [[ -z "$best" ]] || awk -v s="$s" -v b="$best" 'BEGIN { exit !(s < b) }'; then best=$s; fi
  done
  secs_of[$name]=$best
  printf '%-44s %8.2f s %12.0f samples/s\n' "$name" "$best" \
    "$(awk -v n="$samples" -v s="$best" 'BEGIN { print n / s }')"
}

json_out="$bench_dir/convert.json"
fields=time,pid,tid,cpu,ip,period,event
time_cmd "$dumper_name (JSON Lines)" "${dumper[@]}" "$data"
time_cmd "$dumper_name --threads 1 (JSON Lines)" "${dumper[@]}" --threads 1 "$data"
time_cmd "$dumper_name --format perf-json" "${dumper[@]}" --format perf-json "$data"
time_cmd "perf script -F $fields -G" "$perf" script -i "$data" -F "$fields" -G --ns
time_cmd "perf script (default fields)" "$perf" script -i "$data"
time_cmd "perf data convert --to-json" "$perf" data convert -f --to-json "$json_out" -i "$data"
rm -f "$json_out"

ratio() { awk -v a="${secs_of[$1]}" -v b="${secs_of[$2]}" 'BEGIN { printf "%.1f", a / b }'; }
echo "ratios (time of peer / time of ours):"
echo "  perf script -F $fields -G  / dump JSON Lines: $(ratio "perf script -F $fields -G" "$dumper_name (JSON Lines)")x"
echo "  perf script -F $fields -G  / dump --threads 1: $(ratio "perf script -F $fields -G" "$dumper_name --threads 1 (JSON Lines)")x"
echo "  perf script (default)      / dump JSON Lines: $(ratio "perf script (default fields)" "$dumper_name (JSON Lines)")x"
echo "  perf data convert --to-json / dump perf-json: $(ratio "perf data convert --to-json" "$dumper_name --format perf-json")x"
