#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A proof of `flashback start --on-death`: TRIALS times (default 30), a `cerulion pub` is
# killed with -9 at a random moment while a keeper keeps its topic, with on the topic no other
# reader, a lockstep `echo`, a `topic hz` tap, or both (in turn). A trial counts when the keeper
# writes a dump whose metadata names the dead pid ("publisher PID of TOPIC died"). Prints one line
# per trial and the figure per case; exits 1 unless every death was dumped.
#   scripts/flashback-deaths.sh [BUILD_DIR] [TRIALS] [SEED]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
trials=${2:-30}
seed=${3:-$RANDOM}
bin=$(realpath "$build/cerulion")
[ -x "$bin" ] || { echo "flashback-deaths.sh: build first ($build/cerulion)" >&2; exit 2; }
RANDOM=$seed
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cases=(none echo hz both)
declare -A dumped tried
echo "seed $seed"
for ((i = 0; i < trials; i++)); do
  case_name=${cases[i % 4]}
  domain="deaths$$-$i"
  topic=/deaths/t
  dir=$work/$i
  mkdir -p "$dir"
  pids=()
  "$bin" --domain "$domain" flashback start "$topic" --on-death --dir "$dir" --name k --priority normal \
    2> "$dir/keeper.err" &
  keeper=$!
  pids+=("$keeper")
  "$bin" --domain "$domain" pub "$topic" --size 64 --rate 200 --mode lockstep > /dev/null 2>&1 &
  pub=$!
  pids+=("$pub")
  if [ "$case_name" = echo ] || [ "$case_name" = both ]; then
    "$bin" --domain "$domain" echo "$topic" > /dev/null 2>&1 &
    pids+=($!)
  fi
  if [ "$case_name" = hz ] || [ "$case_name" = both ]; then
    "$bin" --domain "$domain" topic hz "$topic" > /dev/null 2>&1 &
    pids+=($!)
  fi
  # A random moment from 0.3 s to 1.5 s in: the keeper and the readers have joined, or are joining.
  sleep "$(printf '0.%03d' $((300 + RANDOM % 700)))"
  [ $((RANDOM % 5)) -eq 0 ] && sleep 0.5
  kill -9 "$pub"
  wait "$pub" 2>/dev/null
  found=no
  for ((t = 0; t < 50; t++)); do  # up to 5 s for the dump
    for f in "$dir"/*.mcap; do
      [ -e "$f" ] || continue
      if "$bin" info "$f" 2>/dev/null | grep -q "publisher $pub of $topic died"; then found=yes; fi
    done
    [ $found = yes ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do [ "$p" != "$pub" ] && kill -INT "$p" 2>/dev/null; done
  wait 2>/dev/null
  "$bin" --domain "$domain" flashback stop --name k --discard > /dev/null 2>&1
  "$bin" --domain "$domain" clean > /dev/null 2>&1
  tried[$case_name]=$((${tried[$case_name]:-0} + 1))
  [ $found = yes ] && dumped[$case_name]=$((${dumped[$case_name]:-0} + 1))
  echo "trial $i ($case_name): pid $pub $([ $found = yes ] && echo dumped || echo "NOT dumped: $(tail -c 300 "$dir/keeper.err" | tr '\n' ' ')")"
done
total=0
for c in "${cases[@]}"; do
  echo "$c: ${dumped[$c]:-0} of ${tried[$c]:-0}"
  total=$((total + ${dumped[$c]:-0}))
done
echo "deaths dumped naming the dead pid: $total of $trials"
[ "$total" -eq "$trials" ]
