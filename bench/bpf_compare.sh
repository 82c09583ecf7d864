#!/bin/sh
# The BPF ring buffer article's comparison measured on this machine (the
# "BPF buffers" section of README.md): order, memory, the consumers alone and
# throughput of the BPF ring buffer and the BPF perf buffer, read by
# perfring's consumers and by libbpf's. Runs as root (BPF programs, perf
# events) in about 3-4 minutes; builds //bench:bpf_compare with bazel first.
#
#   bench/bpf_compare.sh [-o CHART.png] [bpf_compare options...]
#
# Prints the tables (markdown) and draws a PNG chart with gnuplot (installed
# with apt-get, gnuplot-nox, if missing: the chart is the only use). Writes only
# in a new mktemp -d directory (tables.md, *.dat, bpf_compare.png), whose path
# it prints; with -o CHART.png it also copies the chart there, keeping a
# previous regular file as CHART.png.old. The benchmark runs under nice -n -20
# so that builds sharing the machine disturb it less.
set -eu

out=""
if [ "${1:-}" = "-o" ]; then
  [ $# -ge 2 ] || { echo "bpf_compare.sh: -o needs a file" >&2; exit 2; }
  out="$2"
  shift 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "bpf_compare.sh: must run as root (loads BPF programs, opens perf events)" >&2
  exit 1
fi
if [ -n "$out" ]; then
  case "$out" in /*) ;; *) out="$(pwd)/$out" ;; esac
  for f in "$out" "$out.old"; do
    if [ -e "$f" ] && [ ! -f "$f" ]; then
      echo "bpf_compare.sh: $f exists and is not a regular file" >&2
      exit 2
    fi
  done
fi
cd "$(dirname "$0")/.."
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "bpf_compare.sh: installing gnuplot-nox for the chart" >&2
  apt-get install -y -q gnuplot-nox >/dev/null
fi
bazel build -c opt //bench:bpf_compare >&2
bin="$(bazel info -c opt bazel-bin 2>/dev/null)/bench/bpf_compare"

dir="$(mktemp -d)"
{
  echo "Machine: $(nproc) CPUs, kernel $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
  nice -n -20 "$bin" --data "$dir" "$@"
} | tee "$dir/tables.md"

for d in throughput drain memory; do
  if [ ! -f "$dir/$d.dat" ]; then
    echo "bpf_compare.sh: no chart (a partial run: no $d data); tables in $dir" >&2
    exit 0
  fi
done
gnuplot <<GNUPLOT
set terminal pngcairo size 1500,560 font "sans,9" noenhanced
set output "$dir/bpf_compare.png"
set multiplot layout 1,3 title "BPF ring buffer vs perf buffer, $(nproc) vCPUs, Linux $(uname -r)"
set style data histograms
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set xtics rotate by -35 nooffset
set key top left font ",8"

set title "Throughput: M records/s consumed (log)"
set style histogram clustered gap 1
set logscale y
set yrange [0.01:100]
set key top center horizontal maxcols 2
plot for [c=2:5] "$dir/throughput.dat" using c:xtic(1) title columnheader(c)

unset logscale y
set yrange [0:*]
set title "Consumer alone: CPU ns per record"
set style histogram clustered gap 1
unset key
plot "$dir/drain.dat" using 2:xtic(1) lc rgb "#4878a8" notitle

set key top left vertical
set title "Smallest buffer with no loss (KiB, all CPUs)"
plot for [c=2:3] "$dir/memory.dat" using c:xtic(1) title columnheader(c)
unset multiplot
GNUPLOT

if [ -n "$out" ]; then
  [ -f "$out" ] && mv -f "$out" "$out.old"
  cp "$dir/bpf_compare.png" "$out"
  echo "chart: $out" >&2
fi
echo "tables, data and chart in $dir" >&2
