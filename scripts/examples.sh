#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The installed package, used as a program of your own would use it: installs BUILD_DIR (default
# ./build, already built) into a temporary prefix, builds examples/ against it as a separate CMake
# project, compiles every C++ snippet of the README against it and runs it (scripts/readme-snippets.sh), shows
# that a core-only program finds the package without the other components' dependencies, runs the
# examples in pairs for about a second each and checks what the receiving side printed (the
# Python ones of examples/python/ too, with Debian's python3 over the installed package), then
# compiles and runs small programs with pkg-config alone (core, recording, flashback, verify, view).
#   scripts/examples.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
build=$(cd "${1:-build}" && pwd)
started=$(date +%s)

tmp=$(mktemp -d)
pids=""
cleanup() {
  for pid in $pids; do kill "$pid" 2>/dev/null || true; done
  # Flashback stores outlive their keepers: whatever a failed run left in its own domain goes too.
  if [ "${CERULION_DOMAIN:-}" = "examples-$$" ] && [ -x "$tmp/prefix/bin/cerulion" ]; then
    "$tmp/prefix/bin/cerulion" clean --flashback >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '== %s\n' "$*"; }
fail() {
  printf 'examples: %s\n' "$*" >&2
  for f in "$tmp"/run/*.out; do [ -f "$f" ] && { printf -- '--- %s\n' "${f##*/}"; cat "$f"; } >&2; done
  exit 1
}

step "install into a temporary prefix"
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log" >&2; exit 1; }

step "build examples/ against it"
cmake -S "$root/examples" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >"$tmp/configure.log" || { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/build" -j"$(nproc)" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }

step "the README's C++ snippets, each compiled and linked against it"
snippets="$tmp/snippets"
"$root/scripts/readme-snippets.sh" "$root/README.md" "$snippets" || exit 1
cmake -S "$snippets" -B "$snippets/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/snippets.log" 2>&1 ||
  { cat "$tmp/snippets.log" >&2; exit 1; }
broken=0
built_snippets=""
while read -r line components; do
  missing=$(grep "^$line " "$snippets/build/skipped.txt" 2>/dev/null | cut -d' ' -f2) || true
  if [ -n "$missing" ]; then
    printf 'README.md:%s: skipped: the package has no cerulion::%s\n' "$line" "$missing"
    continue
  fi
  # One snippet at a time, so that what the compiler says is about that snippet alone.
  if ! cmake --build "$snippets/build" --target "readme_$line" >"$tmp/snippet.log" 2>&1; then
    printf 'examples: README.md:%s: this cpp snippet does not build against cerulion::%s:\n' "$line" "$components" >&2
    grep -v -e '^g\{0,1\}make' -e '^\[' "$tmp/snippet.log" >&2 || true
    broken=$((broken + 1))
  else
    built_snippets="$built_snippets $line"
  fi
done <"$snippets/snippets.list"
[ "$broken" -eq 0 ] || { printf 'examples: README.md: cpp snippets that do not build: %s\n' "$broken" >&2; exit 1; }

step "a core-only program needs none of the other components' dependencies"
# What a core-only program must not need is hidden from CMake (and the .pc files from pkg-config):
# find_package(cerulion) succeeds and the program links all the same. Each hiding is shown to
# work: a program asking for a component that needs what is hidden is refused, naming it.
mkdir "$tmp/consumer" "$tmp/consumer/no-pkg-config"
cp "$root/scripts/consumer-hello.cpp" "$tmp/consumer/hello.cpp"
# consumer NAME COMPONENTS [HIDDEN...]: configures hello.cpp as a project of its own, linking
# cerulion::<each component>, in $tmp/consumer/NAME (log NAME.log), with each HIDDEN package (a
# CMake package name, or pkg-config) out of reach. COMPONENTS "core" asks for none: the default.
consumer() {
  name=$1 components=$2
  shift 2
  dir="$tmp/consumer/$name"
  mkdir "$dir"
  cp "$tmp/consumer/hello.cpp" "$dir/"
  asked=""
  [ "$components" = core ] || asked=" COMPONENTS $components"
  cat >"$dir/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project($name LANGUAGES CXX)
find_package(cerulion 0.1 REQUIRED$asked)
add_executable(hello hello.cpp)
target_link_libraries(hello PRIVATE$(for c in $components; do printf ' cerulion::%s' "$c"; done))
CMAKE
  hide="" pc_libdir=""
  for package in "$@"; do
    if [ "$package" = pkg-config ]; then pc_libdir="$tmp/consumer/no-pkg-config"
    else hide="$hide -DCMAKE_DISABLE_FIND_PACKAGE_$package=ON"; fi
  done
  # shellcheck disable=SC2086 # $hide is a list of arguments
  if [ -n "$pc_libdir" ]; then
    PKG_CONFIG_LIBDIR=$pc_libdir PKG_CONFIG_PATH="" cmake -S "$dir" -B "$dir/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" $hide
  else
    cmake -S "$dir" -B "$dir/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" $hide
  fi >"$dir.log" 2>&1
}
hidden="Fast DDS, fmt, zlib, zstd and lz4"
consumer core-only core fastrtps fmt ZLIB PkgConfig pkg-config ||
  { cat "$tmp/consumer/core-only.log" >&2; fail "a core-only program did not find the package without $hidden"; }
cmake --build "$tmp/consumer/core-only/build" >"$tmp/consumer/core-only.log" 2>&1 ||
  { cat "$tmp/consumer/core-only.log" >&2; fail "a core-only program did not link without $hidden"; }
# refused NAME COMPONENTS MESSAGE HIDDEN...: that configuration must fail, saying MESSAGE.
refused() {
  name=$1 components=$2 message=$3
  shift 3
  asking="find_package(cerulion COMPONENTS $components) with $* hidden"
  if consumer "$name" "$components" "$@"; then fail "$asking succeeded"; fi
  grep -q "$message" "$tmp/consumer/$name.log" ||
    { cat "$tmp/consumer/$name.log" >&2; fail "$asking did not say '$message'"; }
}
refused no-zlib recording "recording component needs zlib" ZLIB
refused no-zstd recording "recording component needs libzstd" pkg-config
refused no-fmt flashback "flashback component needs fmt" fmt
refused no-zstd-verify verify "verify component needs libzstd" pkg-config
if find "$tmp/prefix" -name cerulion-bridge-targets.cmake | grep -q .; then
  refused no-fastdds bridge "bridge component needs Fast DDS" fastrtps
fi

# A domain of its own, so nothing else running on this machine (tests included) shares the topics.
CERULION_DOMAIN="examples-$$"
export CERULION_DOMAIN
mkdir "$tmp/run"
cd "$tmp/run"
bin="$tmp/build"

# start NAME ARGS...: runs an example in the background, its output in NAME.out; a hang ends at 20 s.
start() {
  name=$1
  shift
  timeout 20 "$bin/$name" "$@" >"$name.out" 2>&1 &
  pids="$pids $!"
  eval "pid_$name=$!"
}
# finish NAME: waits for it; it must exit 0.
finish() {
  eval "pid=\$pid_$1"
  wait "$pid" || fail "$1 exited with status $?"
}
expect() { grep -q -- "$2" "$1.out" || fail "$1 printed no line matching '$2'"; }
# The receiver must be on the topic before the sender's first message: give it a moment.
settle() { sleep 0.3; }

step "the README's C++ snippets, each run"
# Each in a directory of its own (a snippet may write files: a flashback dump), in this domain; a
# snippet that compiles but fails when run (a Result used unchecked) is as wrong as one that does not build.
for line in $built_snippets; do
  mkdir "$tmp/run/readme_$line"
  status=0
  (cd "$tmp/run/readme_$line" && timeout 20 "$snippets/build/readme_$line") >"$tmp/snippet.out" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    printf 'examples: README.md:%s: this cpp snippet builds but exits %s when run:\n' "$line" "$status" >&2
    cat "$tmp/snippet.out" >&2
    broken=$((broken + 1))
  fi
done
[ "$broken" -eq 0 ] || { printf 'examples: README.md: cpp snippets that fail when run: %s\n' "$broken" >&2; exit 1; }

step "talker and listener"
start listener --count 3 --seconds 10
settle
start talker --seconds 1
finish listener
finish talker
expect listener "^heard 'hello world [0-9]*'"

step "camera_publisher and camera_viewer"
start camera_viewer --seconds 1.5
settle
start camera_publisher --seconds 1.2
finish camera_viewer
finish camera_publisher
expect camera_viewer '^[0-9.]* fps, latency median [0-9.]* us'

step "imu_publisher and imu_listener"
start imu_listener --count 20 --seconds 10
settle
start imu_publisher --seconds 1
finish imu_listener
finish imu_publisher
expect imu_listener '^imu [0-9]*: yaw rate 0.50 rad/s'

step "wait_set over the talker, the IMU and the camera"
start wait_set --seconds 1.6
settle
start talker --seconds 1.3
start imu_publisher --seconds 1.3
start camera_publisher --seconds 1.3
finish wait_set
for name in talker imu_publisher camera_publisher; do finish "$name"; done
expect wait_set '^last second: /chatter [1-9][0-9]*, /imu [1-9][0-9]*, /camera/image [1-9][0-9]* messages'

step "record_chatter (cerulion::recording)"
start talker --seconds 1.5
settle
start record_chatter --seconds 1
finish record_chatter
finish talker
expect record_chatter '^recorded [1-9][0-9]* messages of /chatter into chatter.mcap'
"$tmp/prefix/bin/cerulion" info chatter.mcap >info.out 2>&1 || fail "cerulion info could not read chatter.mcap"
expect info '/chatter'

step "replay_chatter (cerulion::recording playback) to the listener"
start listener --count 1 --seconds 10
settle
start replay_chatter
finish replay_chatter
finish listener
expect replay_chatter '^replayed [1-9][0-9]* messages from chatter.mcap'
expect listener "^heard 'hello world [0-9]*'"

step "flashback_chatter (cerulion::flashback): a keeper of its own, dumped when it stops"
start talker --seconds 1.5
settle
start flashback_chatter --seconds 1
finish flashback_chatter
finish talker
expect flashback_chatter '^kept [1-9][0-9]* messages of /chatter, dumped into flashback_chatter.mcap'
"$tmp/prefix/bin/cerulion" info flashback_chatter.mcap >info.out 2>&1 || fail "cerulion info could not read flashback_chatter.mcap"
expect info '/chatter'
expect info 'flashback'
# A node that stopped its keeper cleanly discards its own store.
if "$tmp/prefix/bin/cerulion" flashback status --name flashback_chatter >status.out 2>&1; then
  fail "flashback_chatter left its store behind"
fi

step "json_publisher: a JSON topic with a JSON Schema, recorded and echoed"
cerulion="$tmp/prefix/bin/cerulion"
timeout 20 "$cerulion" record /battery -o battery.mcap --duration 1.5 >record.out 2>&1 &
recorder=$!
pids="$pids $recorder"
settle
start json_publisher --seconds 2
timeout 10 "$cerulion" echo /battery --json --count 3 >echo.out 2>&1 || fail "cerulion echo --json of /battery failed"
wait "$recorder" || fail "cerulion record of /battery exited with status $?"
finish json_publisher
# echo --json gives the payload as a JSON object, not as a string holding it.
expect echo '"data":{"index":[0-9]*,"voltage":'
"$cerulion" info battery.mcap >info.out 2>&1 || fail "cerulion info could not read battery.mcap"
expect info 'json.*schema Battery (jsonschema)'
# Read as Foxglove reads it, where @mcap/core is at hand (never downloaded here).
if [ -n "${CERULION_MCAP_JS_MODULES:-}" ] && command -v node >/dev/null; then
  node "$root/scripts/check-mcap-js.mjs" battery.mcap >mcap-js.out 2>&1 || fail "@mcap/core found battery.mcap wrong"
  expect mcap-js '"schema_encoding": *"jsonschema"'
fi

if [ -x "$bin/live_view" ]; then
  step "live_view (cerulion::view): a process of your own serving /battery over the Foxglove protocol"
  start live_view --seconds 2.5
  start json_publisher --seconds 3
  # The address it serves on (a port of its own), then its list of channels over HTTP.
  for _ in 1 2 3 4 5 6 7 8 9 10; do grep -q '^serving ws://' live_view.out && break; sleep 0.2; done
  url=$(sed -n 's|^serving ws://\(.*\)$|http://\1/channels.json|p' live_view.out)
  [ -n "$url" ] || fail "live_view printed no address"
  if command -v python3 >/dev/null; then
    sleep 1
    python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
      "$url" >channels.out 2>&1 || fail "GET $url failed"
    expect channels '"topic":"/battery"'
  fi
  finish live_view
  finish json_publisher
  expect live_view '^served /battery (json): [1-9][0-9]* messages'
else
  step "live_view: skipped (the package was built without Boost.Beast)"
fi

step "Ctrl-C and SIGTERM stop an example cleanly"
for signal in INT TERM; do
  "$bin/listener" >signal.out 2>&1 &
  pid=$!
  pids="$pids $pid"
  settle
  kill -s "$signal" "$pid"
  # A listener that ignored the signal would wait for ever: the watchdog ends it with SIGKILL.
  (sleep 3 && kill -s KILL "$pid" 2>/dev/null) &
  watchdog=$!
  status=0
  wait "$pid" || status=$?
  kill "$watchdog" 2>/dev/null || true
  [ "$status" -eq 0 ] || fail "listener exited with status $status after SIG$signal (137: still running 3 s later)"
done

# The Python examples over the installed package, with Debian's python3 and nothing but the
# package's directory on PYTHONPATH; beside the C++ ones on the same topics.
python_package=$(find "$tmp/prefix" -path '*/cerulion/__init__.py' | head -n 1)
if [ -z "$python_package" ]; then
  step "Python examples: skipped (the package was built without python3-dev and pybind11-dev)"
else
  PYTHONPATH=$(dirname "$(dirname "$python_package")")
  export PYTHONPATH
  # start_py NAME ARGS...: as start, for examples/python/NAME.py; its output in py_NAME.out.
  start_py() {
    name=$1
    shift
    timeout 20 /usr/bin/python3 "$root/examples/python/$name.py" "$@" >"py_$name.out" 2>&1 &
    pids="$pids $!"
    eval "pid_py_$name=$!"
  }

  step "Python: talker.py and listener.py"
  start_py listener --count 3
  settle
  start_py talker --count 15
  finish py_listener
  finish py_talker
  expect py_listener '^#[0-9]*: hello world [0-9]*'

  step "Python: camera_publisher.py to camera_viewer.py and the C++ camera_viewer"
  start_py camera_viewer --seconds 1.5
  start camera_viewer --seconds 1.5
  settle
  start_py camera_publisher --seconds 1.2
  finish py_camera_viewer
  finish camera_viewer
  finish py_camera_publisher
  expect py_camera_viewer '^[0-9.]* fps, latency median [0-9.]* us'
  expect camera_viewer '^[0-9.]* fps, latency median [0-9.]* us'

  step "Python: wait_set.py over talker.py, the C++ imu_publisher and camera_publisher.py"
  start_py wait_set --seconds 1.6
  settle
  start_py talker --count 13
  start imu_publisher --seconds 1.3
  start_py camera_publisher --seconds 1.3
  finish py_wait_set
  for name in py_talker imu_publisher py_camera_publisher; do finish "$name"; done
  expect py_wait_set '^last second: /chatter [1-9][0-9]*, /imu [1-9][0-9]*, /camera/image [1-9][0-9]* messages'

  step "Python: read_recording.py reads chatter.mcap"
  timeout 20 /usr/bin/python3 "$root/examples/python/read_recording.py" chatter.mcap >py_read_recording.out 2>&1 ||
    fail "read_recording.py could not read chatter.mcap"
  expect py_read_recording '^/chatter: [1-9][0-9]* messages'
  unset PYTHONPATH
fi

step "the installed cerulion finds its plugins where they were installed"
# Outside the build tree, the program looks beside itself only: a bridge that runs found bridge.so there.
if find "$tmp/prefix" -name bridge.so | grep -q .; then
  env -u CERULION_PLUGIN_DIR timeout 20 "$cerulion" bridge /examples/plugin --export --no-shared-memory \
    --dds-domain 231 --duration 1 >bridge.out 2>&1 || fail "the installed cerulion bridge exited with status $?"
  expect bridge '^bridging /examples/plugin of domain'
fi

step "pkg-config alone"
pc=$(find "$tmp/prefix" -name cerulion.pc | head -n 1)
[ -n "$pc" ] || fail "no cerulion.pc installed"
cp "$tmp/consumer/hello.cpp" .
flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs cerulion)
${CXX:-c++} -std=c++20 hello.cpp -o hello $flags || fail "hello.cpp did not build with: $flags"
./hello >hello.out 2>&1 || fail "the pkg-config program failed"
expect hello "^cerulion [0-9.]*: published 1"
cat >channels.cpp <<'CPP'
#include <cerulion/recorder/reader.hpp>
#include <cerulion/recording/recording.hpp>
#include <cstdio>

int main() {
  auto reader = cerulion::recorder::Reader::open("chatter.mcap");
  if (!reader) return std::puts(reader.message().c_str()), 1;
  for (const auto& [id, channel] : reader->summary().channels) std::printf("channel %s\n", channel.topic.c_str());
}
CPP
flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs cerulion-recording)
${CXX:-c++} -std=c++20 channels.cpp -o channels $flags || fail "channels.cpp did not build with: $flags"
./channels >channels.out 2>&1 || fail "the pkg-config recording program failed"
expect channels "^channel /chatter"

cat >keeper.cpp <<'CPP'
#include <cerulion/flashback/keeper.hpp>
#include <cstdio>

int main() {
  cerulion::flashback::KeeperOptions o;
  o.selection.all = true;
  o.name = "pkgconfig";
  o.limits.memory_bytes = 4u << 20;
  auto keeper = cerulion::flashback::Keeper::start(o);
  if (!keeper) return std::puts(keeper.message().c_str()), 1;
  keeper->stop();
  std::printf("keeper started and stopped, store %s\n", keeper->store().path().c_str());
}
CPP
flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs cerulion-flashback)
${CXX:-c++} -std=c++20 keeper.cpp -o keeper $flags || fail "keeper.cpp did not build with: $flags"
./keeper >keeper.out 2>&1 || fail "the pkg-config flashback program failed"
expect keeper "^keeper started and stopped, store /dev/shm/cerulion-flashback\\."
"$tmp/prefix/bin/cerulion" flashback stop --name pkgconfig --discard >stop.out 2>&1 ||
  fail "flashback stop --discard could not remove the pkg-config program's store"

# verify's archive needs the child-process helper's: the program links verify() whole, and a
# recording that cannot serve it ends the call before any command is started.
cat >verifier.cpp <<'CPP'
#include <cerulion/verify/verification.hpp>
#include <cstdio>

int main() {
  cerulion::verify::VerifyOptions o;
  o.recording = "chatter.mcap";
  o.run.command = {"./listener"};
  o.run.inputs = {"/chatter"};
  o.run.outputs = {"/heard"};
  const auto v = cerulion::verify::verify(o);
  std::printf("verdict %s: %s\n", cerulion::verify::to_string(v.verdict), v.problem.c_str());
}
CPP
flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs cerulion-verify)
${CXX:-c++} -std=c++20 verifier.cpp -o verifier $flags || fail "verifier.cpp did not build with: $flags"
./verifier >verifier.out 2>&1 || fail "the pkg-config verify program failed"
expect verifier "^verdict recording unusable: .*no output topic '/heard'"

# view, where it was built: the live_view example itself, with pkg-config's flags alone.
if PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --exists cerulion-view; then
  flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs cerulion-view)
  ${CXX:-c++} -std=c++20 -I"$root/examples" "$root/examples/live_view.cpp" -o live_view_pc $flags ||
    fail "live_view.cpp did not build with: $flags"
  ./live_view_pc --seconds 0.3 >live_view_pc.out 2>&1 || fail "the pkg-config view program failed"
  expect live_view_pc '^serving ws://127\.0\.0\.1:[0-9]*$'
fi

step "the examples passed in $(($(date +%s) - started)) s"
