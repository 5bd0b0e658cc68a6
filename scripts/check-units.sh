#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The flashback systemd units (packaging/systemd/), as configured into UNIT_ROOT (a build tree's
# systemd/ or an unpacked package's usr/), checked against the cerulion binary CERULION:
# - systemd-analyze verify finds nothing to say of the system's unit nor of a user's (skipped,
#   saying so, without systemd-analyze);
# - the command line the unit runs, as systemd expands it (%i the domain, %S the state directory,
#   $CERULION_FLASHBACK_OPTIONS each example of the environment file ENV_FILE), starts a keeper
#   that keeps a topic; `systemctl stop`'s SIGTERM ends it with the exit status the unit counts
#   as success, and its store stays for a dump.
#   scripts/check-units.sh UNIT_ROOT CERULION ENV_FILE
set -eu
[ "$#" -eq 3 ] || { echo "usage: scripts/check-units.sh UNIT_ROOT CERULION ENV_FILE" >&2; exit 2; }
units=$1 cerulion=$2 env_file=$3
domain="check-units-$$"
tmp=$(mktemp -d)
keeper="" publisher=""
cleanup() {
  for pid in $keeper $publisher; do kill "$pid" 2>/dev/null || true; done
  "$cerulion" --domain "$domain" flashback stop --discard >/dev/null 2>&1 || true
  "$cerulion" --domain "$domain" clean >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { printf 'check-units: %s\n' "$*" >&2; exit 1; }

for scope in system user; do
  unit="$units/lib/systemd/$scope/cerulion-flashback@.service"
  [ -f "$unit" ] || fail "no $unit"
  # As it is, but for ExecStart's binary, CERULION (verify checks that it exists).
  mkdir -p "$tmp/$scope"
  sed "s|^ExecStart=[^ ]*/cerulion |ExecStart=$cerulion |" "$unit" >"$tmp/$scope/cerulion-flashback@.service"
  grep -q "^ExecStart=$cerulion " "$tmp/$scope/cerulion-flashback@.service" || fail "the $scope unit runs no cerulion"
  if command -v systemd-analyze >/dev/null; then
    flag=""
    [ "$scope" = user ] && flag="--user"
    # A template is verified as its instance cerulion-flashback@i.service.
    # shellcheck disable=SC2086 # $flag is empty or one argument
    XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$tmp} systemd-analyze $flag verify --man=no \
      "$tmp/$scope/cerulion-flashback@.service" >"$tmp/verify.out" 2>&1 || true
    if [ -s "$tmp/verify.out" ]; then cat "$tmp/verify.out" >&2; fail "systemd-analyze $flag verify has something to say of the $scope unit"; fi
    echo "systemd-analyze $flag verify: the $scope unit: nothing to say"
  else
    echo "systemd-analyze verify: skipped (no systemd-analyze here)"
  fi
done
grep -qx 'SuccessExitStatus=143' "$tmp/system/cerulion-flashback@.service" ||
  fail "the unit does not count the keeper's exit after SIGTERM (143) as success"

# The environment file's examples, uncommented one at a time, and none at all.
{ echo; sed -n 's/^#CERULION_FLASHBACK_OPTIONS="\(.*\)"$/\1/p' "$env_file"; } >"$tmp/examples"
[ "$(wc -l <"$tmp/examples")" -gt 1 ] || fail "$env_file has no example"
command=$(sed -n 's/^ExecStart=//p' "$tmp/system/cerulion-flashback@.service")
while IFS= read -r options; do
  # systemd's expansion: %i and %S, and $VAR split at whitespace, quotes kept as they are.
  # --priority normal: an idle-priority keeper (the default) on a busy machine may take nothing in
  # the moments this check gives it.
  line=$(printf '%s\n' "$command" | sed -e "s|%i|$domain|g" -e "s|%S|$tmp/state|g" \
    -e "s|\$CERULION_FLASHBACK_OPTIONS|$options --priority normal|")
  mkdir -p "$tmp/state/cerulion/flashback/$domain"
  # shellcheck disable=SC2086 # the unit's command line, split as systemd splits it
  set -- $line
  "$@" 2>"$tmp/keeper.err" &
  keeper=$!
  # The keeper is up once its store says so; a keeper that exits early fails here.
  tries=0
  until "$cerulion" --domain "$domain" flashback status >/dev/null 2>&1; do
    kill -0 "$keeper" 2>/dev/null || { cat "$tmp/keeper.err" >&2; fail "the unit's keeper exited at once with options '$options'"; }
    tries=$((tries + 1))
    [ "$tries" -lt 200 ] || fail "the unit's keeper did not start within 20 s with options '$options'"
    sleep 0.1
  done
  # A publisher until the keeper holds some of its messages.
  "$cerulion" --domain "$domain" pub /check/units "kept by the unit's keeper" -n 1000 -r 50 >/dev/null 2>&1 &
  publisher=$!
  tries=0
  until "$cerulion" --domain "$domain" flashback status --json 2>/dev/null | grep -q '"topic":"/check/units","messages":[1-9]'; do
    tries=$((tries + 1))
    [ "$tries" -lt 200 ] || fail "the unit's keeper took no message of /check/units within 20 s ($options)"
    sleep 0.1
  done
  kill "$publisher" 2>/dev/null || true
  wait "$publisher" 2>/dev/null || true
  publisher=""
  kill -TERM "$keeper"
  status=0
  wait "$keeper" || status=$?
  keeper=""
  [ "$status" -eq 143 ] || { cat "$tmp/keeper.err" >&2; fail "after SIGTERM the keeper exited $status, not 143 ($options)"; }
  # The store stayed, with the message, for a dump after the service stopped.
  "$cerulion" --domain "$domain" flashback dump -o "$tmp/after-stop.mcap" >/dev/null 2>"$tmp/dump.err" ||
    { cat "$tmp/dump.err" >&2; fail "no dump after the keeper stopped ($options)"; }
  "$cerulion" info "$tmp/after-stop.mcap" | grep -q '/check/units' || fail "the dump after the stop lacks /check/units ($options)"
  "$cerulion" --domain "$domain" flashback stop --discard >/dev/null 2>&1 || true
  rm -f "$tmp/after-stop.mcap"
  echo "the unit's keeper with options '$options': started, kept /check/units, stopped by SIGTERM (143), store dumped"
done <"$tmp/examples"
