#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One-shot topics beside `cerulion record -a`: per run, a recorder of a domain of its own, then
# TOPICS topics each created, published once and removed by `cerulion pub /t x --once`; prints
# what the file kept, what its lost:TOPIC metadata counts, and what is unaccounted for (the
# figures of docs/performance.md, "Topics that come and go"). With HOGS > 0, that many busy loops
# run beside it (started and stopped by the script).
#
#   scripts/oneshot-figures.sh [BUILD_DIR] [RUNS] [TOPICS] [HOGS]
set -eu
build=${1:-build}
runs=${2:-3}
topics=${3:-20}
hogs=${4:-0}
bin="$build/cerulion"
file=$(mktemp --suffix=.mcap)
hog_pids=()
stop() {
  for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -f "$file"
}
trap stop EXIT
for _ in $(seq 1 "$hogs"); do
  (while :; do :; done) &
  hog_pids+=($!)
done
for run in $(seq 1 "$runs"); do
  domain="oneshot$run-$$"
  rm -f "$file"
  "$bin" --domain "$domain" record -a -o "$file" --duration 6 2>/dev/null &
  recorder=$!
  sleep 1
  for i in $(seq 1 "$topics"); do "$bin" --domain "$domain" pub "/once/t$i" "hello $i" --once; done
  wait "$recorder"
  "$bin" info --json "$file" | python3 -c "
import json, sys
info = json.load(sys.stdin)
counts = {}
for m in info['metadata']:
    counts.update(m['metadata'])
kept = sum(c['message_count'] for c in info['channels'])
lost = sum(int(v) for k, v in counts.items() if k.startswith('lost:'))
named = sum(1 for k in counts if k.startswith('lost:'))
print(f'run $run: $topics published, {kept} kept, {lost} counted lost, {$topics - kept - lost} unaccounted, '
      f'{named} of $topics topics in the account')
"
done
