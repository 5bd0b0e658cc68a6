#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Flashback under CPU overload: what a dump holds of everything published before its request.

Each run starts a keeper (`cerulion flashback start -a`, default options) in a domain of its own,
a 1 kHz 64 B topic and two 1-2 MiB topics at 50 Hz, and N busy loops (nice 0) it starts and stops
itself; the keeper starts before the topics or after them, in turn. About 2 s into the traffic it
asks for a dump (T = the request), then kills the keeper with -9 (K) and dumps again. Per run and
topic it prints: published before T, held, newest missing (ms before T, 0 = none missing), missing
counted as lost in the dump or not, and the dump's time; then, for the stop, how long `flashback
stop` took. The figures go into docs/performance.md ("Under overload").

  scripts/overload-figures.py --build build --hogs 2 --runs 10
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CERULION = "cerulion"
TOPICS = [("/lag/small", "64", "1000"), ("/lag/big1", "1MiB", "50"), ("/lag/big2", "2MiB", "50")]


def published_counts(cerulion, env):
    out = subprocess.run([cerulion, "topic", "list", "--json"], env=env, capture_output=True, text=True, timeout=30)
    listing = json.loads(out.stdout or "{}")
    topics = listing.get("topics", listing) if isinstance(listing, dict) else listing
    return {t["name"]: t["published"] for t in topics}


def dump(cerulion, env, path):
    started = time.monotonic()
    out = subprocess.run([cerulion, "flashback", "dump", "--name", "k", "-o", path], env=env, capture_output=True,
                         text=True, timeout=120)
    return time.monotonic() - started, out.returncode, out.stderr.strip()


def analyse(path, published, request_ns):
    import cerulion as c  # the build's module (PYTHONPATH)
    rec = c.Recording(path)
    seen = {}
    for m in rec.messages():
        seen.setdefault(m.topic, {})[m.sequence] = m.publish_time_ns
    lost = {}
    info = subprocess.run([CERULION, "info", "--json", path], capture_output=True, text=True, timeout=60)

    def find(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and key.startswith("lost:") and isinstance(value, (str, int)):
                    lost[key[5:]] = int(value)
                else:
                    find(value)
        elif isinstance(node, list):
            for item in node:
                find(item)
    find(json.loads(info.stdout or "{}"))
    rows = []
    for topic, _, _ in TOPICS:
        n = published.get(topic, 0)
        have = seen.get(topic, {})
        first = min(have) if have else 0
        missing = [s for s in range(first if have else 0, n) if s not in have]
        newest_ms = 0.0
        if missing:
            s = missing[-1]
            later = [have[x] for x in have if x > s]
            newest_ms = (request_ns - (min(later) if later else max(have.values(), default=request_ns))) / 1e6
        counted = lost.get(topic, 0)
        rows.append((topic, n, len([s for s in have if s < n]), newest_ms, len(missing), min(counted, len(missing)),
                     max(0, len(missing) - counted)))
    return rows


def run_once(args, index, keeper_first):
    domain = f"ovl{os.getpid()}x{index}"
    env = dict(os.environ, CERULION_DOMAIN=domain)
    work = tempfile.mkdtemp(prefix="overload-")
    procs = []
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(args.hogs)]
    try:
        def keeper():
            return subprocess.Popen([args.cerulion, "flashback", "start", "-a", "--name", "k", "--dir", work], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        def publishers():
            return [subprocess.Popen([args.cerulion, "pub", t, "--size", size, "--rate", rate, "--mode", "free-run",
                                      "--fill", "counter"], env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL) for t, size, rate in TOPICS]
        if keeper_first:
            k = keeper()
            time.sleep(0.5)
            procs += publishers()
        else:
            procs += publishers()
            time.sleep(0.5)
            k = keeper()
        procs.append(k)
        time.sleep(2.0)
        results = []
        for label in ("live", "kill -9"):
            if label == "kill -9":
                k.send_signal(signal.SIGKILL)
                k.wait()
            request_ns = time.time_ns()
            published = published_counts(args.cerulion, env)
            path = os.path.join(work, label.replace(" ", "").replace("-", "") + ".mcap")
            seconds, rc, err = dump(args.cerulion, env, path)
            rows = analyse(path, published, request_ns) if rc == 0 else []
            results.append((label, seconds, rc, err, rows))
        # A fresh keeper over the same store, stopped under the same load.
        k2 = subprocess.Popen([args.cerulion, "flashback", "start", "-a", "--name", "k", "--dir", work], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            st = subprocess.run([args.cerulion, "flashback", "status", "--name", "k", "--json"], env=env,
                                capture_output=True, text=True, timeout=30)
            if st.stdout and json.loads(st.stdout).get("alive") and json.loads(st.stdout).get("keeper_pid") == k2.pid:
                break
            time.sleep(0.1)
        time.sleep(1.0)
        started = time.monotonic()
        subprocess.run([args.cerulion, "flashback", "stop", "--name", "k"], env=env, capture_output=True, timeout=120)
        try:
            k2.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        stop_s = time.monotonic() - started
        return results, stop_s
    finally:
        for p in procs + hogs:
            if p.poll() is None:
                p.kill()
            p.wait()
        subprocess.run([args.cerulion, "flashback", "stop", "--name", "k", "--discard"], env=dict(os.environ,
                       CERULION_DOMAIN=domain), capture_output=True, timeout=60)
        subprocess.run([args.cerulion, "clean"], env=dict(os.environ, CERULION_DOMAIN=domain), capture_output=True,
                       timeout=60)
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--hogs", type=int, default=2)
    ap.add_argument("--runs", type=int, default=4)
    args = ap.parse_args()
    global CERULION
    args.cerulion = CERULION = os.path.abspath(os.path.join(args.build, "cerulion"))
    sys.path.insert(0, os.path.abspath(os.path.join(args.build, "python")))
    print(f"# {args.runs} runs, {args.hogs} busy loops, {os.cpu_count()} CPUs, {os.uname().nodename}")
    worst = 0.0
    uncounted = 0
    for i in range(args.runs):
        keeper_first = i % 2 == 0
        results, stop_s = run_once(args, i, keeper_first)
        for label, seconds, rc, err, rows in results:
            print(f"run {i + 1} ({'keeper first' if keeper_first else 'topics first'}), {label} dump: {seconds:.2f} s"
                  + (f", exit {rc}: {err}" if rc else ""))
            for topic, n, held, newest_ms, missing, counted, not_counted in rows:
                print(f"  {topic:11} published {n:6}  held {held:6}  missing {missing:5} (counted {counted}, "
                      f"uncounted {not_counted})  newest missing {newest_ms:7.1f} ms")
                worst = max(worst, newest_ms)
                uncounted += not_counted
        print(f"  flashback stop: {stop_s:.2f} s")
    print(f"# worst newest missing {worst:.1f} ms; uncounted {uncounted}")


if __name__ == "__main__":
    main()
