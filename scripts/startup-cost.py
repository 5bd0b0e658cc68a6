#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# What a plain command costs to start: CPU time of `cerulion --version`, the shared
# libraries and the resident memory of a running `pub` and `echo`, and how long a new publisher
# takes to reach an echo that waits for it. docs/performance.md quotes its output.
#   scripts/startup-cost.py [BINARY] [RUNS]      (default: build/cerulion, 100)
# Needs perf for the CPU time (else it uses the process times of RUNS runs).
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/cerulion")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 100
domain = f"startup{os.getpid()}"
env = dict(os.environ, CERULION_DOMAIN=domain)


def version_cpu_ms():
    if shutil.which("perf"):
        out = subprocess.run(["perf", "stat", "-x,", "-r", str(runs), "-e", "task-clock", binary, "--version"],
                             capture_output=True, text=True, env=env).stderr
        for line in out.splitlines():
            if "task-clock" in line:
                return float(line.split(",")[0]), "perf stat task-clock"
    start = os.times()
    for _ in range(runs):
        subprocess.run([binary, "--version"], capture_output=True, env=env)
    end = os.times()
    return (end.children_user + end.children_system - start.children_user - start.children_system) * 1000 / runs, \
        "user+system times"


def wait_for_topic(topic, timeout=5.0):
    name = domain + topic.replace("/", ":")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(name in f for f in os.listdir("/dev/shm")):
            return
        time.sleep(0.01)


def footprint(pid):
    """Shared objects mapped, and VmRSS in KiB, of a running process."""
    with open(f"/proc/{pid}/maps") as f:
        libs = {line.split()[-1] for line in f if ".so" in line.split()[-1]}
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return libs, rss


def running(args, settle=0.5):
    proc = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(settle)
    libs, rss = footprint(proc.pid)
    return proc, libs, rss


def stop(proc):
    proc.terminate()
    proc.wait(timeout=10)


def reach_ms(samples=20):
    """From starting a `pub` to a waiting `echo` receiving its message (echo's receive stamp)."""
    out = []
    for i in range(samples):
        topic = f"/startup/reach{i}"
        echo = subprocess.Popen([binary, "echo", topic, "-n", "1", "--json"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env, text=True)
        wait_for_topic(topic)
        time.sleep(0.2)
        started = time.monotonic_ns()
        subprocess.run([binary, "pub", topic, "x", "-1"], capture_output=True, env=env)
        line = echo.communicate(timeout=10)[0]
        match = re.search(r'"receive_monotonic_ns":(\d+)', line)
        if match:
            out.append((int(match.group(1)) - started) / 1e6)
    return out


def main():
    print(f"binary: {binary}")
    print(f"machine: {os.cpu_count()} CPUs, {os.uname().release}, load {os.getloadavg()[0]:.2f}")
    ms, how = version_cpu_ms()
    print(f"--version: {ms:.2f} ms CPU ({how}, {runs} runs)")
    echo, echo_libs, echo_rss = running(["echo", "/startup/steady"])
    pub, pub_libs, pub_rss = running(["pub", "/startup/steady", "--size", "64", "-r", "10"])
    stop(pub)
    stop(echo)
    for name, libs, rss in (("echo", echo_libs, echo_rss), ("pub", pub_libs, pub_rss)):
        heavy = sorted(os.path.basename(l) for l in libs if re.search(r"fastrtps|iceoryx|ssl|crypto|sqlite", l))
        print(f"{name}: VmRSS {rss / 1024:.1f} MiB, {len(libs)} shared objects mapped"
              f"{', heavy: ' + ' '.join(heavy) if heavy else ''}")
    reach = reach_ms()
    if reach:
        print(f"pub to a waiting echo: median {statistics.median(reach):.1f} ms, "
              f"min {min(reach):.1f} ms, max {max(reach):.1f} ms ({len(reach)} runs)")
    subprocess.run([binary, "clean"], capture_output=True, env=env)


main()
