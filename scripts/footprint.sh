#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The message path's footprint: distinct code lines and pages, data lines and pages that
# one side of a round trip touches, from valgrind's lackey trace of that side (the other side runs
# natively), for the busy-poll/futex floor (build/bench/floor-pingpong, bench/tools/floor_pingpong.cpp)
# and for cerulion in each wait strategy. Counts, not times: the same on a noisy machine. Needs
# valgrind. docs/performance.md explains the counts.
#   scripts/footprint.sh [BUILD_DIR] [ROUND_TRIPS]     (default: build, 60)
# Topics are created with a 1 MiB ceiling: valgrind cannot map the default 1 GiB per slot, and a
# slot of a 64 B message is one page either way.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
count=${2:-60}
bin=$build/cerulion
counter=$build/bench/footprint-count
floor=$build/bench/floor-pingpong
work=$(mktemp -d)
trap 'rm -rf "$work"; pkill -f "cerulion pong --topic /footprint/" 2>/dev/null || true' EXIT
for tool in valgrind nm; do
  command -v $tool >/dev/null || { echo "footprint.sh: needs $tool" >&2; exit 2; }
done
[ -x "$bin" ] && [ -x "$counter" ] && [ -x "$floor" ] || { echo "footprint.sh: build first ($bin, $counter, $floor)" >&2; exit 2; }
# valgrind loads a position-independent executable at this base on amd64.
base=0x108000
lackey=(valgrind --tool=lackey --trace-mem=yes)
skip=10

symbol_address() {  # binary, demangled symbol prefix
  local off
  off=$(nm -C "$1" | awk -v s="$2" 'index($0, s) { print $1; exit }')
  [ -n "$off" ] || { echo "footprint.sh: no symbol '$2' in $1" >&2; exit 1; }
  printf '0x%x' $((base + 0x$off))
}
# The floor: both of its processes traced (it forks); it has no function called once per round
# trip, so a window starts at the first instruction that ran once per round trip (count + 1 of
# them: one unmeasured).
for wait in spin futex; do
  rate=100; [ $wait = spin ] && rate=0
  "${lackey[@]}" --log-file="$work/floor.$wait.%p" "$floor" --wait $wait --rate $rate --samples $count >/dev/null
  traces=($(ls "$work"/floor.$wait.* | sort -t. -k3 -n))
  "$counter" --skip $skip --label "floor $wait ping" --every $((count + 1)) "${traces[0]}"
  "$counter" --skip $skip --label "floor $wait pong" --every $((count + 1)) "${traces[1]}"
  rm -f "${traces[@]}"
done

# cerulion: a window starts at each publish (the request on ping's side, the reply on pong's).
publish=$(symbol_address "$bin" 'cerulion::Publisher::publish(cerulion::Loan&&')
# The warm pass reads every line of this section; counted apart, as its size, not per window.
hot_begin=$(symbol_address "$bin" '__start_cerulion_hot_text')
hot_end=$(symbol_address "$bin" '__stop_cerulion_hot_text')
echo "warm pass: reads the hot code section, $(( (hot_end - hot_begin + 63) / 64 )) lines ($(( (hot_end - hot_begin) / 1024 )) KiB), each time it runs; not counted below"
run_cerulion() {  # label, wait, extra args for both sides
  local label=$1 wait=$2; shift 2
  local rate=100; [ "$wait" = spin ] && rate=0
  local topic=/footprint/$$
  # Traced ping against a native pong.
  "$bin" pong --topic $topic --topic-ceiling 1MiB --wait "$wait" "$@" --cpu 1 & local pong=$!
  "${lackey[@]}" --log-file="$work/ping.trace" "$bin" ping --peer --topic $topic --topic-ceiling 1MiB --wait "$wait" "$@" \
      -r $rate -c "$count" --warmup $skip --timeout 300 --cpus none >/dev/null
  kill -INT $pong; wait $pong || true
  "$counter" --skip $skip --label "cerulion $label ping" --delimiter "$publish" --ignore-data "${hot_begin#0x}-${hot_end#0x}" "$work/ping.trace"
  # Traced pong against a native ping.
  "${lackey[@]}" --log-file="$work/pong.trace" "$bin" pong --topic $topic --topic-ceiling 1MiB --wait "$wait" "$@" & local traced=$!
  "$bin" ping --peer --topic $topic --topic-ceiling 1MiB --wait "$wait" "$@" -r $rate -c "$count" --warmup $skip --timeout 300 --cpus none >/dev/null
  kill -INT $traced; wait $traced || true
  "$counter" --skip $skip --label "cerulion $label pong" --delimiter "$publish" --ignore-data "${hot_begin#0x}-${hot_end#0x}" "$work/pong.trace"
  rm -f "$work"/*.trace
}
for wait in spin block adaptive; do
  run_cerulion "$wait" "$wait"
done
run_cerulion "adaptive wait-set 3" adaptive --wait-set 3
