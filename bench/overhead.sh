#!/usr/bin/env bash
# perfring record against perf record: the recorder's own CPU, the
# workload's slowdown, samples written and lost, output bytes, start-up and
# finish, system calls per 1000 samples, resident memory; and perfring dump's
# memory on a large perf.data next to perf script / perf report. Every
# scenario runs the workload alone, under `perf record` and under
# `perfring record` (also with --json beside the perf.data) with the same
# options, alternating, REPS times, in one run: medians and perfring/perf
# ratios. perf's way to JSON is timed too: `perf data convert --to-json` of
# perf's file, its CPU added to perf's recorder's. Draws the overhead curve (recorder CPU % against -F) with gnuplot.
#
#   bench/overhead.sh [--quick] [--scenarios LIST] [-o CHART.png]
#
# --scenarios a-max,a-g-max,...: only those scenarios (names as in the
# tables), with the usual repetitions, and no reader-memory check or chart.
# PERFRING=/path/to/perfring uses that binary instead of building one (to
# measure a baseline beside a change in the same run conditions).
# Needs root (-a, raw_syscalls), perf, gcc, gnuplot (gnuplot-nox). Writes only
# in a new mktemp -d directory, whose path it prints (results.tsv, tables.md,
# overhead.png); -o CHART.png also copies the chart there. About 13 minutes
# on a 2-CPU VM; --quick: 4 scenarios, 1 repetition, a 128 MiB memory check
# (about 1.5 minutes). Environment: REPS, WORK_SECONDS, MEM_MB override;
# SCENARIOS="a-1k a-5k" is --scenarios a-1k,a-5k; MEM_MB=0 leaves out the
# readers.
set -euo pipefail
quick=0
only="${SCENARIOS:+${SCENARIOS// /,}}"
chart_out=""
while (($#)); do
  case "$1" in
    --quick) quick=1; shift ;;
    --scenarios) only="$2"; shift 2 ;;
    -o) chart_out="$2"; shift 2 ;;
    *) echo "overhead.sh: unknown argument $1 (usage: bench/overhead.sh [--quick] [--scenarios LIST] [-o CHART.png])" >&2; exit 2 ;;
  esac
done
[[ $(id -u) == 0 ]] || { echo "overhead.sh: must run as root (-a capture, raw_syscalls)" >&2; exit 1; }
[[ -n "$chart_out" && "$chart_out" != /* ]] && chart_out="$(pwd)/$chart_out"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "overhead.sh: installing gnuplot-nox for the chart" >&2
  apt-get install -y -q gnuplot-nox >/dev/null
fi
if [[ -n "${PERFRING:-}" ]]; then  # a given binary (another build, to compare)
  perfring="$PERFRING"
else
  bazel build -c opt --config=quiet //cli:perfring >&2
  perfring="$(bazel info -c opt bazel-bin 2>/dev/null)/cli/perfring"
fi
perf=/usr/bin/perf

dir="$(mktemp -d)"
echo "overhead.sh: working in $dir" >&2
gcc -O2 -o "$dir/run" bench/overhead/run.c
gcc -O2 -pthread -fno-omit-frame-pointer -o "$dir/busy" bench/overhead/busy.c
gcc -O2 -o "$dir/forkexec" bench/overhead/forkexec.c

if ((quick)); then
  reps=${REPS:-1}; work_s=${WORK_SECONDS:-0.8}; mem_mb=${MEM_MB:-128}; syscall_s=0.3
  scenarios=(a-10k a-g-10k cmd-20k forkexec)
else
  reps=${REPS:-3}; work_s=${WORK_SECONDS:-1.2}; mem_mb=${MEM_MB:-2048}; syscall_s=0.8
  scenarios=(a-1k a-5k a-10k a-20k a-50k a-max a-g-1k a-g-5k a-g-10k a-g-20k a-g-50k a-g-max
             dwarf-1k cmd-20k forkexec)
fi
if [[ -n "$only" ]]; then IFS=, read -r -a scenarios <<<"$only"; fi
threads=2

# The busy workload's iterations for work_s seconds of one thread alone.
"$dir/run" bare "$dir/cal" -- "$dir/busy" 1 100000000 "$dir/cal" >"$dir/cal.out"
cal_cpu=$(sed 's/.* cpu=\([0-9.]*\).*/\1/' "$dir/cal.out")
iters=$(awk -v c="$cal_cpu" -v s="$work_s" 'BEGIN { printf "%d", 1e8 * s / c }')
# The fork/exec workload: short processes, 4 at a time, about as long.
fe_count=$(awk -v s="$work_s" 'BEGIN { printf "%d", s * 1500 }')

# options_of SCENARIO: the options both recorders get; mode_of: system or command.
options_of() {
  case "$1" in
    a-g-*) echo "-a -g -e cpu-clock -F $(freq_of "${1#a-g-}")" ;;
    a-*) echo "-a -e cpu-clock -F $(freq_of "${1#a-}")" ;;
    dwarf-1k) echo "-a --call-graph dwarf -e cpu-clock -F 1000" ;;
    cmd-20k) echo "-e cpu-clock -F 20000" ;;
    forkexec) echo "-a -e cpu-clock -F 4000" ;;
  esac
}
freq_of() { [[ $1 == max ]] && echo max || echo $(( ${1%k} * 1000 )); }
mode_of() { [[ $1 == cmd-* ]] && echo command || echo system; }
# At -F max (millions of samples a second here, about 100 MB a second of
# output) the workload is a quarter as long, to keep the files small.
workload_of() {
  if [[ $1 == forkexec ]]; then echo "$dir/forkexec $fe_count 4 /bin/true $dir/stats"
  elif [[ $1 == *-max ]]; then echo "$dir/busy $threads $((iters / 4)) $dir/stats"
  else echo "$dir/busy $threads $iters $dir/stats"; fi
}

# Counts in a perf.data, from perfring dump: samples and lost (LOST + LOST_SAMPLES).
file_counts() {
  "$perfring" dump "$1" | awk '
    /^\{"type":"SAMPLE"/ { s++ }
    /^\{"type":"LOST/ { if (match($0, /"lost":[0-9]+/)) l += substr($0, RSTART + 7, RLENGTH - 7) }
    END { printf "%d %d\n", s, l }'
}
# What the recorder says it wrote: "(N samples)"; lost: perfring's "LOST N events",
# perf's "Processed N samples and lost P%".
claimed() {
  local err="$1" s l
  s=$(grep -o '([0-9]* samples)' "$err" | tail -1 | tr -dc 0-9)
  l=$(grep -o 'LOST [0-9]* events' "$err" | head -1 | tr -dc 0-9 || true)
  if [[ -z "$l" ]]; then
    l=$(awk '/Processed [0-9]+ samples and lost/ { n = $2; p = $6; sub(/%.*/, "", p); printf "%d", n * p / 100 }' "$err")
  fi
  echo "${s:-0} ${l:-0}"
}

results="$dir/results.tsv"
printf 'scenario\tarm\trep\tload\twall\tcpu\tstartup\tfinish\trec_cpu\trec_rss_kb\tsyscalls\tsyscall_s\trec_status\tbytes\tjson_bytes\tfile_samples\tfile_lost\tclaimed_samples\tclaimed_lost\tconvert_cpu\n' >"$results"

run_arm() {  # SCENARIO ARM REP
  local sc="$1" arm="$2" rep="$3" mode opts out="$dir/out.data" json="$dir/out.jsonl" line rec=()
  mode=$(mode_of "$sc"); opts=$(options_of "$sc")
  rm -f "$out" "$out.old" "$json" "$json.old"
  # Syscalls are counted in the first repetition only (perf stat attaches).
  local sys=0; ((rep == 1)) && sys=$syscall_s
  case "$arm" in
    bare) line=$("$dir/run" bare "$dir/stats" -- $(workload_of "$sc") 2>"$dir/err") ;;
    perf) rec=("$perf" record $opts -o "$out") ;;
    perfring) rec=("$perfring" record $opts -o "$out") ;;
    perfring-json) rec=("$perfring" record $opts -o "$out" --json "$json") ;;
  esac
  if [[ $arm != bare ]]; then
    if [[ $mode == system ]]; then
      line=$("$dir/run" system "$dir/stats" "$sys" "$dir/fifo" -- $(workload_of "$sc") @@ "${rec[@]}" 2>"$dir/err")
    else
      line=$("$dir/run" command "$dir/stats" "$sys" -- $(workload_of "$sc") @@ "${rec[@]}" 2>"$dir/err")
    fi
  fi
  local bytes=0 json_bytes=0 fs=0 fl=0 cs=0 cl=0 conv=0
  if [[ $arm != bare ]]; then
    bytes=$(stat -c %s "$out"); [[ -f "$json" ]] && json_bytes=$(stat -c %s "$json")
    read -r fs fl < <(file_counts "$out")
    read -r cs cl < <(claimed "$dir/err")
  fi
  # What JSON costs a perf user: perf's file converted afterwards (user+sys).
  if [[ $arm == perf ]]; then
    rm -f "$dir/perf.json"
    if /usr/bin/time -f '%U %S' -o "$dir/convert.time" \
         "$perf" data convert -i "$out" --to-json "$dir/perf.json" >/dev/null 2>&1; then
      conv=$(tail -1 "$dir/convert.time" | awk '{ print $1 + $2 }')
    else
      conv=-1  # left out of the medians
    fi
    rm -f "$dir/perf.json"
  fi
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  echo "$line" | awk -v sc="$sc" -v arm="$arm" -v rep="$rep" -v load="$load" -v b="$bytes" -v jb="$json_bytes" \
    -v fs="$fs" -v fl="$fl" -v cs="$cs" -v cl="$cl" -v conv="$conv" '{
      for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sc, arm, rep, load,
        v["wall"], v["cpu"], v["startup"], v["finish"], v["rec_cpu"], v["rec_rss_kb"], v["syscalls"],
        v["syscall_s"], v["rec_status"], b, jb, fs, fl, cs, cl, conv }' >>"$results"
}

{
  echo "machine: $(nproc) vCPU VM, kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "PMUs: $(ls /sys/bus/event_source/devices | tr '\n' ' ')(no hardware PMU: cpu-clock)"
  echo "perf: $("$perf" --version), perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
  echo "start: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "workload: busy $threads threads x $iters iterations (~${work_s}s of one CPU each), forkexec $fe_count x /bin/true, 4 at a time; $reps repetitions"
} | tee "$dir/machine.txt" >&2

arms=(bare perf perfring perfring-json)
for sc in "${scenarios[@]}"; do
  echo "overhead.sh: $sc ($(options_of "$sc"))" >&2
  for ((rep = 1; rep <= reps; rep++)); do
    # The order rotates each repetition, so no arm always runs first.
    for ((k = 0; k < ${#arms[@]}; k++)); do
      run_arm "$sc" "${arms[$(( (k + rep - 1) % ${#arms[@]} ))]}" "$rep"
    done
  done
done
rm -f "$dir/out.data" "$dir/out.data.old" "$dir/out.jsonl" "$dir/out.jsonl.old"

# --- memory of the readers on a large perf.data -------------------------------
mem="$dir/mem.tsv"
printf 'tool\tinput\tbytes\tmax_rss_kb\tseconds\n' >"$mem"
if [[ -z "$only" ]] && ((mem_mb > 0)); then
echo "overhead.sh: reader memory on a ${mem_mb} MiB perf.data" >&2
"$perf" record -q -a -e cpu-clock -F 10000 -o "$dir/seed.data" -- "$dir/busy" 2 "$iters" "$dir/stats" 2>/dev/null
python3 bench/overhead/grow_perf_data.py "$dir/seed.data" "$dir/big.data" $((mem_mb << 20))
big_bytes=$(stat -c %s "$dir/big.data")
measure_reader() {  # NAME INPUT_DESC COMMAND...  (output to /dev/null)
  local name="$1" desc="$2"; shift 2
  /usr/bin/time -f '%M %e' -o "$dir/time.out" "$@" >/dev/null 2>"$dir/reader.err" || true
  read -r rss secs <"$dir/time.out"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$desc" "$big_bytes" "$rss" "$secs" >>"$mem"
}
measure_reader "perfring dump" file "$perfring" dump "$dir/big.data"
# --sort time on one long capture (each copy's times after the last, as a
# recorder writes them): the same copies at the same times would have to be
# held whole to interleave them.
python3 bench/overhead/grow_perf_data.py --shift-times "$dir/seed.data" "$dir/big.time" $((mem_mb << 20))
measure_reader "perfring dump --sort time" "file (times rising)" "$perfring" dump --sort time "$dir/big.time"
rm -f "$dir/big.time"
python3 bench/overhead/grow_perf_data.py --pipe --shift-times "$dir/seed.data" "$dir/big.pipe" $((mem_mb << 20))
measure_reader "perfring dump --sort time -" "pipe-mode stream (cat |, times rising)" \
  sh -c "cat '$dir/big.pipe' | '$perfring' dump --sort time -"
rm -f "$dir/big.pipe"
# The same records as a pipe-mode stream (what `record -o -` writes).
python3 bench/overhead/grow_perf_data.py --pipe "$dir/seed.data" "$dir/big.pipe" $((mem_mb << 20))
measure_reader "perfring dump -" "pipe-mode stream (cat |)" sh -c "cat '$dir/big.pipe' | '$perfring' dump -"
rm -f "$dir/big.pipe"
# perf reads the same file; on the full-size file perf report alone takes
# minutes, so perf is measured on at most 512 MiB (the row says the size).
if ((mem_mb > 512)); then
  python3 bench/overhead/grow_perf_data.py "$dir/seed.data" "$dir/mid.data" $((512 << 20))
  mv "$dir/big.data" "$dir/big.full"; mv "$dir/mid.data" "$dir/big.data"; big_bytes=$(stat -c %s "$dir/big.data")
  measure_reader "perfring dump" file "$perfring" dump "$dir/big.data"
fi
measure_reader "perf script" file "$perf" script -i "$dir/big.data"
measure_reader "perf report --stdio" file "$perf" report --stdio -i "$dir/big.data"
python3 bench/overhead/grow_perf_data.py --pipe "$dir/seed.data" "$dir/big.pipe" "$big_bytes"
if ((mem_mb > 512)); then
  measure_reader "perfring dump -" "pipe-mode stream (cat |)" sh -c "cat '$dir/big.pipe' | '$perfring' dump -"
fi
measure_reader "perf script -i -" "pipe-mode stream (cat |)" sh -c "cat '$dir/big.pipe' | '$perf' script -i -"
rm -f "$dir/big.pipe"
rm -f "$dir/big.data" "$dir/big.full" "$dir/seed.data" "$dir/seed.data.old"
fi

echo "end: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)" >>"$dir/machine.txt"
python3 bench/overhead/report.py "$dir" | tee "$dir/tables.md"

# --- the curve -----------------------------------------------------------------
if [[ -z "$only" && -s "$dir/curve.dat" ]]; then
  gnuplot <<GNUPLOT
set terminal pngcairo size 1100,480 font "sans,10" noenhanced
set output "$dir/overhead.png"
set multiplot layout 1,2 title "Recorder CPU (% of one CPU, median) against -F, -a -e cpu-clock, busy 2-thread workload; $(nproc) vCPU VM, Linux $(uname -r), no hardware PMU, load $(cut -d' ' -f1 /proc/loadavg)"
set xlabel "-F (Hz; the last point is -F max)"
set ylabel "recorder CPU, % of one CPU"
set logscale x
set grid
set key top left
set title "-a"
plot "$dir/curve.dat" using 1:2 with linespoints lw 2 title "perf record", \
     "" using 1:3 with linespoints lw 2 title "perfring record", \
     "" using 1:4 with linespoints lw 2 dt 2 title "perfring record --json"
set title "-a -g"
plot "$dir/curve.dat" using 1:5 with linespoints lw 2 title "perf record -g", \
     "" using 1:6 with linespoints lw 2 title "perfring record -g", \
     "" using 1:7 with linespoints lw 2 dt 2 title "perfring record -g --json"
unset multiplot
GNUPLOT
  echo "overhead.sh: chart $dir/overhead.png" >&2
  if [[ -n "$chart_out" ]]; then
    [[ -f "$chart_out" ]] && mv "$chart_out" "$chart_out.old"
    cp "$dir/overhead.png" "$chart_out"
  fi
fi
echo "overhead.sh: results in $dir" >&2
