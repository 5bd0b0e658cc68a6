#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The bridge figures of docs/performance.md: round trips across two bridges (ping in domain A,
# pong in domain B, each domain with its own bridge on one DDS domain) beside the bench's Fast DDS
# lane, and sustained throughput through the two bridges. Usage: scripts/bridge-perf.sh [BUILD_DIR]
set -u
BIN=${1:-build}/cerulion
DDS=$(( $$ % 200 + 20 ))
A=perfa_$$ B=perfb_$$
MODE=${BRIDGE_MODE:---lockstep}   # BRIDGE_MODE= (empty) measures the default tap mode
MODE="$MODE ${BRIDGE_EXTRA:-}"     # BRIDGE_EXTRA=--no-shared-memory: UDP only, as between machines
pids=()
cleanup() { for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
"$BIN" --domain "$A" bridge -a $MODE --dds-domain "$DDS" 2>/tmp/bridge-perf-a.log & pids+=($!)
"$BIN" --domain "$B" bridge -a $MODE --dds-domain "$DDS" 2>/tmp/bridge-perf-b.log & pids+=($!)
imported() {  # messages B's bridge imported on topic $1 so far
  "$BIN" --domain "$B" bridge status --json | python3 -c "import json,sys
print(sum(t['messages'] for b in json.load(sys.stdin)['bridges'] for t in b['topics'] if t['topic']=='$1' and t['direction']=='import'))"
}
if [ -z "${SKIP_PING:-}" ]; then
  "$BIN" --domain "$B" pong --topic /rtt & pids+=($!)
  sleep 2
  # DDS is volatile: the first requests go before the far side has matched, and the reply topic is
  # imported only once the pong has answered. A short ping first brings both directions up.
  "$BIN" --domain "$A" ping --peer --topic /rtt -c 20 --warmup 5 -r 20 --timeout 1 --cpus none >/dev/null 2>&1
  sleep 1
  for size in 64 1MiB 16MiB; do
    count=1000; [ "$size" = 16MiB ] && count=200
    echo "== across two bridges, $size"
    "$BIN" --domain "$A" ping --peer --topic /rtt -s "$size" -c "$count" --warmup 20 -r 20 --timeout 2 --cpus none | tail -4
    echo "== Fast DDS lane (one DDS hop, no bridge), $size"
    "$BIN" ping --transport fastdds -s "$size" -c "$count" --warmup 20 -r 20 --cpus none | tail -4
  done
fi
for spec in "1MiB 100 1000" "64 10000 50000"; do
  set -- $spec
  topic=/tp_$2
  echo "== throughput $1 at $2 Hz, $3 messages"
  "$BIN" --domain "$A" pub $topic --size "$1" -r "$2" -n 50 >/dev/null   # warm-up: match both ways
  sleep 2
  before=$(imported $topic)
  "$BIN" --domain "$B" echo $topic -n "$3" --raw --timeout 30 >/dev/null & echo_pid=$!
  sleep 1
  start=$(date +%s.%N)
  "$BIN" --domain "$A" pub $topic --size "$1" -r "$2" -n "$3" >/dev/null
  end=$(date +%s.%N)
  wait "$echo_pid"; echo "a local echo in B received all $3: exit $? (0 = yes); pub took $(echo "$end - $start" | bc) s"
  sleep 2
  echo "imported by B's bridge during the run: $(( $(imported $topic) - before )) of $3"
  "$BIN" --domain "$A" bridge status | grep "$topic "
  "$BIN" --domain "$B" bridge status | grep "$topic "
done
