#!/usr/bin/env python3
"""Tables (markdown) and the curve data from bench/overhead.sh's results.tsv
and mem.tsv, in DIR: medians over the repetitions, perfring/perf ratios.

  report.py DIR      (writes DIR/curve.dat, prints the tables)
"""
import csv
import statistics
import sys
from collections import defaultdict

d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/results.tsv"), delimiter="\t"))
runs = defaultdict(list)
order = []
for r in rows:
    if r["scenario"] not in order:
        order.append(r["scenario"])
    runs[(r["scenario"], r["arm"])].append(r)


def med(sc, arm, key):
    vals = [float(r[key]) for r in runs[(sc, arm)] if r[key] not in ("", "-1")]
    return statistics.median(vals) if vals else float("nan")


def life(sc, arm):  # the recorder's life: start-up, the workload, finish
    return med(sc, arm, "startup") + med(sc, arm, "wall") + med(sc, arm, "finish")


def cpu_pct(sc, arm):
    return 100 * med(sc, arm, "rec_cpu") / life(sc, arm)


def ratio(a, b):
    return f"{a / b:.2f}" if b else "-"


def us_per_sample(sc, arm):
    """The recorder's CPU a sample written, in microseconds (median over the
    runs): a rate that compares when the tools' files hold different numbers
    of samples (a workload slowed more runs longer and is sampled more)."""
    vals = [1e6 * float(r["rec_cpu"]) / int(r["file_samples"])
            for r in runs[(sc, arm)] if r["rec_cpu"] not in ("", "-1") and int(r["file_samples"]) > 0]
    return statistics.median(vals) if vals else float("nan")


def per_1000(sc, arm):
    first = [r for r in runs[(sc, arm)] if r["rep"] == "1" and float(r["syscall_s"]) > 0]
    if not first:
        return float("nan")
    r = first[0]
    rate = float(r["file_samples"]) / float(r["wall"])  # samples/s in the steady state
    return 1000 * float(r["syscalls"]) / (rate * float(r["syscall_s"])) if rate else float("nan")


def checked(sc, arm):
    """'ok' when the recorder's own counts match the file's in every run."""
    bad = [r for r in runs[(sc, arm)]
           if int(r["claimed_samples"]) != int(r["file_samples"])
           or abs(int(r["claimed_lost"]) - int(r["file_lost"])) > max(1, int(r["file_lost"]) // 100)]
    if not bad:
        return "ok"
    r = bad[0]
    return (f"{len(bad)} off (says {r['claimed_samples']} samples, {r['claimed_lost']} lost; "
            f"file {r['file_samples']}, {r['file_lost']})")


print(open(f"{d}/machine.txt").read().strip().replace("\n", "  \n"))
print()
print("Recorder CPU (user+sys of the recorder alone, s, and % of one CPU over its life), the "
      "workload's wall-time slowdown over the bare run, start-up (launch to ready) + finish "
      "(workload end to exit), medians:")
print()
print("| scenario | perf CPU | perfring CPU | ratio | +json CPU | ratio | perf + convert CPU | +json ratio to it "
      "| slowdown perf / perfring / +json | start+finish perf / perfring / +json (s) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for sc in order:
    p, q, j = (med(sc, a, "rec_cpu") for a in ("perf", "perfring", "perfring-json"))
    bare = med(sc, "bare", "wall")
    slow = " / ".join(f"{100 * (med(sc, a, 'wall') / bare - 1):+.1f}%" for a in ("perf", "perfring", "perfring-json"))
    sf = " / ".join(f"{med(sc, a, 'startup'):.2f}+{med(sc, a, 'finish'):.2f}" for a in ("perf", "perfring", "perfring-json"))
    # perf's JSON: its recorder's CPU plus `perf data convert --to-json` of its file.
    pc = med(sc, "perf", "rec_cpu") + med(sc, "perf", "convert_cpu")
    print(f"| {sc} | {p:.3f} s ({cpu_pct(sc, 'perf'):.1f}%) | {q:.3f} s ({cpu_pct(sc, 'perfring'):.1f}%) | "
          f"{ratio(q, p)} | {j:.3f} s | {ratio(j, p)} | {pc:.3f} s | {ratio(j, pc)} | {slow} | {sf} |")
print()
print("Samples and losses written (from the file, `perfring dump`; 'ok': the recorder's own "
      "count matches the file in every run), output bytes, the recorder's peak RSS, system "
      "calls per 1000 samples (steady state, raw_syscalls:sys_enter of the recorder's pid), the "
      "recorder's CPU a sample written (each run's CPU over its file's samples), medians:")
print()
print("| scenario | samples perf / perfring / +json | lost perf / perfring / +json | check | "
      "bytes perf / perfring (ratio) | +json: JSON bytes | RSS MiB perf / perfring / +json | "
      "syscalls/1000 samples perf / perfring / +json | CPU µs a sample perf / perfring / +json (ratio) |")
print("|---|---|---|---|---|---|---|---|---|")
for sc in order:
    arms = ("perf", "perfring", "perfring-json")
    s = " / ".join(f"{med(sc, a, 'file_samples'):.0f}" for a in arms)
    lost = " / ".join(f"{med(sc, a, 'file_lost'):.0f}" for a in arms)
    chk = " / ".join(checked(sc, a) for a in arms)
    pb, qb = med(sc, "perf", "bytes"), med(sc, "perfring", "bytes")
    # bytes per sample, so that different sample counts compare
    ps, qs = med(sc, "perf", "file_samples"), med(sc, "perfring", "file_samples")
    per = f" ({ratio(qb / qs, pb / ps)} per sample)" if ps and qs else ""
    rss = " / ".join(f"{med(sc, a, 'rec_rss_kb') / 1024:.1f}" for a in arms)
    sysc = " / ".join(f"{per_1000(sc, a):.2f}" for a in arms)
    us = [us_per_sample(sc, a) for a in arms]
    cpu = " / ".join(f"{u:.2f}" for u in us) + f" ({ratio(us[1], us[0])}, {ratio(us[2], us[0])})"
    print(f"| {sc} | {s} | {lost} | {chk} | {pb / 1e6:.2f} M / {qb / 1e6:.2f} M{per} | "
          f"{med(sc, 'perfring-json', 'json_bytes') / 1e6:.1f} M | {rss} | {sysc} | {cpu} |")

with open(f"{d}/curve.dat", "w") as f:
    f.write("# hz perf perfring perfring-json perf-g perfring-g perfring-json-g (recorder CPU %)\n")
    for sc in order:
        if sc.startswith("a-") and not sc.startswith("a-g-"):
            hz = sc[2:]
            g = f"a-g-{hz}"
            x = 100000 if hz == "max" else int(hz[:-1]) * 1000
            vals = [cpu_pct(sc, a) for a in ("perf", "perfring", "perfring-json")]
            vals += [cpu_pct(g, a) if (g, a) in runs else float("nan") for a in ("perf", "perfring", "perfring-json")]
            f.write(f"{x} " + " ".join(f"{v:.2f}" for v in vals) + "\n")

try:
    mem = list(csv.DictReader(open(f"{d}/mem.tsv"), delimiter="\t"))
except FileNotFoundError:
    mem = []
if mem:
    print()
    print("Readers on a large perf.data (the data of a real capture repeated), peak RSS "
          "(/usr/bin/time %M) and time, output to /dev/null:")
    print()
    print("| reader | input | size | peak RSS | time |")
    print("|---|---|---|---|---|")
    for m in mem:
        print(f"| `{m['tool']}` | {m['input']} | {int(m['bytes']) / 2**20:.0f} MiB | "
              f"{int(m['max_rss_kb']) / 1024:.0f} MiB | {float(m['seconds']):.1f} s |")
