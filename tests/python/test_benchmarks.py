# SPDX-License-Identifier: Apache-2.0
"""The Python benchmarks run and say what they measured: `python3 -m cerulion.ping` (against
`cerulion ping` in the same run) and bench/tools/python_frames.py (cerulion against
multiprocessing.shared_memory with a pipe)."""

import json
import pathlib
import subprocess
import sys

FRAMES = pathlib.Path(__file__).resolve().parents[2] / "bench" / "tools" / "python_frames.py"


def test_python_ping_measures_round_trips_at_each_size_beside_cerulion_ping(cerulion_bin):
    run = subprocess.run([sys.executable, "-m", "cerulion.ping", "-s", "64", "-s", "1MiB", "-c", "20", "--warmup", "2",
                          "-r", "200", "--against", cerulion_bin, "--json"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert [r["size_bytes"] for r in results] == [64, 1 << 20]
    for r in results:
        assert r["count"] + r["lost"] == 20 and r["count"] > 0
        assert 0 < r["rtt_us"]["min"] <= r["rtt_us"]["median"] <= r["rtt_us"]["max"]
        assert r["cpp_rtt_median_us"] > 0 and r["python_over_cpp"] > 0
    assert "median_over_first_size" not in results[0] and results[1]["median_over_first_size"] > 0


def test_python_ping_refuses_a_size_without_room_for_its_timestamp():
    run = subprocess.run([sys.executable, "-m", "cerulion.ping", "-s", "4"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "at least 8" in run.stderr


def test_the_frames_benchmark_compares_cerulion_and_shared_memory_in_one_run():
    run = subprocess.run([sys.executable, str(FRAMES), "--frames", "15", "--rate", "200", "--width", "64", "--height",
                          "48", "--json"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert [r["transport"] for r in results] == ["cerulion", "shared_memory+pipe"]
    for r in results:
        assert r["frames"] == 15 and r["latency_median_us"] > 0 and len(r["receiver_rss_kib"]) == 2


def test_the_frames_benchmark_adds_a_cerulion_column_per_wait_strategy_asked():
    run = subprocess.run([sys.executable, str(FRAMES), "--frames", "12", "--rate", "200", "--width", "64", "--height",
                          "48", "--wait", "adaptive,block", "--json"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert [r["transport"] for r in results] == ["cerulion", "cerulion/block", "shared_memory+pipe"]


def test_the_frames_benchmark_refuses_an_unknown_wait_strategy():
    run = subprocess.run([sys.executable, str(FRAMES), "--wait", "adaptive,nap"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2 and "--wait" in run.stderr
