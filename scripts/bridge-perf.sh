#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The bridge figures of docs/performance.md: round trips across two bridges (ping in domain A,
# pong in domain B, each domain with its own bridge on one DDS domain) beside the bench's Fast DDS
# lane, and sustained throughput through the two bridges. Usage: scripts/bridge-perf.sh [BUILD_DIR]
set -u
BIN=${1:-build}/cerulion
DDS=$(( $$ % 200 + 20 ))
A=perfa_$$ B=perfb_$$
pids=()
cleanup() { for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
"$BIN" --domain "$A" bridge -a --lockstep --dds-domain "$DDS" 2>/tmp/bridge-perf-a.log & pids+=($!)
"$BIN" --domain "$B" bridge -a --lockstep --dds-domain "$DDS" 2>/tmp/bridge-perf-b.log & pids+=($!)
"$BIN" --domain "$B" pong --topic /rtt & pids+=($!)
sleep 2
for size in 64 1MiB 16MiB; do
  count=1000; [ "$size" = 16MiB ] && count=200
  echo "== across two bridges, $size"
  "$BIN" --domain "$A" ping --peer --topic /rtt -s "$size" -c "$count" --warmup 20 -r 20 --timeout 2 --cpus none | tail -4
  echo "== Fast DDS lane (one DDS hop, no bridge), $size"
  "$BIN" ping --transport fastdds -s "$size" -c "$count" --warmup 20 -r 20 --cpus none | tail -4
done
for spec in "1MiB 100 1000" "64 10000 50000"; do
  set -- $spec
  echo "== throughput $1 at $2 Hz, $3 messages"
  "$BIN" --domain "$A" pub /tp_$2 --size "$1" -r "$2" -n 50 >/dev/null   # warm-up: match both ways
  sleep 2
  "$BIN" --domain "$B" echo /tp_$2 -n "$3" --raw --timeout 60 >/dev/null & echo_pid=$!
  sleep 1
  "$BIN" --domain "$A" pub /tp_$2 --size "$1" -r "$2" -n "$3" >/dev/null
  wait "$echo_pid"; echo "echo in B got all: exit $?"
  sleep 2
  "$BIN" --domain "$A" bridge status | grep "tp_$2"
  "$BIN" --domain "$B" bridge status | grep "tp_$2"
done
