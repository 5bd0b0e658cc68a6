#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The tail-latency figures on a 2-vCPU machine in one go: REPS repetitions of (the futex floor, then `cerulion
# ping` with the default adaptive wait), each repetition's adaptive p99 beside the floor's median,
# the count of repetitions where p99 <= the floor's median, the spin and block medians, and where
# the late round trips came from (`ping --explain-tail`, summed over the repetitions).
#   scripts/tail-figures.py [--build DIR] [--reps N] [--count N] [--size BYTES] [--no-spin-block]
#                           [--cpu-budget PCT] [--timers]
# --cpu-budget runs the adaptive pings with that budget (ping --cpu-budget); --timers adds
# bench/timer-lateness's table of timed wake-ups (about 10 s more).
#   scripts/tail-figures.py --long RUNS [--count N] [--ping-args "ARGS"] [--build DIR]
# --long: issue 55's slow phases instead: RUNS runs of `cerulion ping --explain-tail` (12,000
# round trips each unless --count), each beside the futex floor's median, with its windows of
# 250 round trips, the slow phases found (ping's own rule: a window's median over 50 µs and 5x the
# fastest window's), the slowest window, p99 and CPU; --ping-args adds options to every ping
# (e.g. "-s 1MiB", "-r 1000", "--process single", "--wait-set 4").
# About 4 minutes with the defaults (5 x (2,000 floor + 2,100 ping round trips at 100 Hz), then
# spin and block once each). Run it on a quiet machine: other work's wake-ups are in every figure.
import argparse
import collections
import json
import os
import subprocess
import sys
import time


def run(argv, json_even_on_failure=False):
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        # A ping that lost round trips still printed its summary: it is reported, with the loss.
        if json_even_on_failure and done.stdout.strip().startswith("{"):
            print(f"  ({' '.join(argv[1:3])}...: {done.stderr.strip()})", flush=True)
            return done.stdout
        sys.exit(f"tail-figures: {' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def floor_median(floor, count):
    line = run([floor, "--wait", "futex", "--samples", str(count)]).strip().splitlines()[-1]
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    return float(fields["median_us"]), float(fields["p99_us"])


def ping(binary, count, size, wait, explain, budget=None, extra=()):
    argv = [binary, "ping", "-c", str(count), "-s", str(size), "--wait", wait, "--json", *extra]
    if budget is not None:
        argv += ["--cpu-budget", str(budget)]
    if explain:
        argv.append("--explain-tail")
    out = run(argv, json_even_on_failure=True)
    return json.loads(out.strip().splitlines()[-1])


def long_runs(binary, floor, a):
    """Issue 55's figures: slow phases per run, from ping's own --explain-tail report."""
    extra = a.ping_args.split()
    count = a.count if a.count_given else 12000
    print(f"{'run':>3}  {'floor median':>12}  {'median':>9}  {'p99':>9}  {'p99<=floor':>10}  {'windows':>7}  "
          f"{'slow windows':>12}  {'slowest window':>14}  {'cpu ping/pong %':>15}  phases (round trips: median µs; "
          f"misses pong/ping, of them fallen back)")
    runs_with_phases = hits = 0
    for run_no in range(1, a.long + 1):
        floor_med, _ = floor_median(floor, 2000)
        s = ping(binary, count, a.size, "adaptive", True, a.cpu_budget, extra)
        rtt = s["rtt_us"]
        p99 = rtt["p99"]
        ok = p99 is not None and p99 <= floor_med and s["lost"] == 0
        hits += ok
        phases = s.get("phases", {})
        found = phases.get("found", [])
        runs_with_phases += bool(found)
        slow_windows = sum((ph["end"] - ph["first"]) // phases["window"] for ph in found)
        slowest = max([ph["median_us"] for ph in found], default=None)
        text = "; ".join(f"{ph['first']}-{ph['end'] - 1}: {ph['median_us']:.1f} "
                         f"({ph['pong']['missed']}/{ph['ping']['missed']}, fallen back {ph['pong']['fallen_back']}/"
                         f"{ph['ping']['fallen_back']}, pong {ph['pong']['cause']}, "
                         f"ping {ph['ping']['cause']})" for ph in found) or "none"
        p99_text = f"{p99:.3f}" if p99 is not None else "-"
        slowest_text = f"{slowest:.3f}" if slowest is not None else "-"
        print(f"{run_no:>3}  {floor_med:>12.3f}  {rtt['median']:>9.3f}  {p99_text:>9}  {'yes' if ok else 'no':>10}  "
              f"{phases.get('windows', 0):>7}  {slow_windows:>12}  {slowest_text:>14}  "
              f"{s['cpu_pct']['ping']:>7.2f}/{s['cpu_pct']['pong']:<7.2f}  {text}", flush=True)
    print(f"runs with a slow phase: {runs_with_phases} of {a.long}; p99 <= the futex floor's median in {hits} of {a.long}")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--build", default=os.path.join(root, "build"))
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--count", type=int, default=None)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--no-spin-block", action="store_true", help="skip the spin and block runs")
    p.add_argument("--cpu-budget", type=float, help="the adaptive pings' --cpu-budget, in %%")
    p.add_argument("--timers", action="store_true", help="also run bench/timer-lateness")
    p.add_argument("--long", type=int, default=0, metavar="RUNS", help="slow phases over RUNS long runs instead")
    p.add_argument("--ping-args", default="", help="with --long: options added to every ping")
    a = p.parse_args()
    a.count_given = a.count is not None
    if a.count is None:
        a.count = 2000
    binary = os.path.join(a.build, "cerulion")
    floor = os.path.join(a.build, "bench", "floor-pingpong")
    for path in (binary, floor):
        if not os.access(path, os.X_OK):
            sys.exit(f"tail-figures: build first ({path} is missing)")
    started = time.monotonic()
    if a.long > 0:
        long_runs(binary, floor, a)
        print(f"took {time.monotonic() - started:.0f} s")
        return
    print(f"{'rep':>3}  {'floor median':>12}  {'adaptive median':>15}  {'adaptive p99':>12}  "
          f"{'p99<=floor':>10}  {'late':>5}  {'cpu ping/pong %':>15}  most late round trips")
    hits = 0
    medians, p99s = [], []
    causes = collections.Counter()
    by = collections.defaultdict(list)
    futex = []
    for rep in range(1, a.reps + 1):
        floor_med, _ = floor_median(floor, a.count)
        s = ping(binary, a.count, a.size, "adaptive", True, a.cpu_budget)
        rtt = s["rtt_us"]
        p99 = rtt["p99"]
        ok = p99 is not None and p99 <= floor_med and s["lost"] == 0
        hits += ok
        medians.append(rtt["median"])
        if p99 is not None:
            p99s.append(p99)
        tail = s.get("tail", {})
        for row in tail.get("rows", []):
            key = (row["part"], row["cause"])
            causes[key] += row["count"]
            by[key].append(row["median_by_us"])
        f = tail.get("futex", {})
        if f.get("legs"):
            futex.append((f["legs"], f["median_us"], f["p99_us"]))
        p99_text = f"{p99:.3f}" if p99 is not None else "-"
        rows = tail.get("rows", [])
        top = f"{rows[0]['part']} {rows[0]['cause']} ({rows[0]['count']})" if rows else "-"
        print(f"{rep:>3}  {floor_med:>12.3f}  {rtt['median']:>15.3f}  {p99_text:>12}  {'yes' if ok else 'no':>10}  "
              f"{tail.get('late', 0):>5}  {s['cpu_pct']['ping']:>7.2f}/{s['cpu_pct']['pong']:<7.2f}  {top}", flush=True)
    print(f"p99 <= the futex floor's median in {hits} of {a.reps} repetitions (target: at least 4)")
    medians.sort()
    print(f"adaptive median of medians {medians[len(medians) // 2]:.3f} µs")
    if not a.no_spin_block:
        for wait in ("spin", "block"):
            s = ping(binary, a.count, a.size, wait, False)
            p99 = s["rtt_us"]["p99"]
            print(f"{wait:>5}: median {s['rtt_us']['median']:.3f} µs, p99 {p99 if p99 is not None else '-'} µs, "
                  f"cpu ping/pong {s['cpu_pct']['ping']:.2f}/{s['cpu_pct']['pong']:.2f} %", flush=True)
    print("late round trips (over 5x the median) by the part that was late and why, all repetitions:")
    if not causes:
        print("  none")
    for (part, cause), n in causes.most_common():
        medians_by = sorted(by[(part, cause)])
        print(f"  {part:<10} {cause:<18} {n:>5} trips, by (median of the repetitions' medians) "
              f"{medians_by[len(medians_by) // 2]:.3f} µs")
    for legs, med, p99 in futex:
        print(f"  futex wake-ups: {legs} legs, publish to seen median {med:.3f} µs, p99 {p99:.3f} µs")
    if a.timers:
        timers = os.path.join(a.build, "bench", "timer-lateness")
        print("timed wake-ups, lateness by how they are asked for:")
        print(run([timers, "--samples", "300"]).rstrip())
    print(f"took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
