#!/bin/sh
# run-worker.sh [--fence FENCE] EXIT_JSON PROGRAM [ARG...]
# Leads a worker run's process group: runs the worker as its child, survives the TERM sent to
# the group (the worker gets it and ends), waits for the worker, and records how it ended in
# EXIT_JSON, so a later gatehouse instance that cannot waitpid still knows. gatehouse reads the
# file only once this wrapper has exited, so a plain write (no fork for mv) is enough; a write
# cut short by SIGKILL reads as garbage, which counts as "no exit record".
# A status above 128 means "killed by signal (status - 128)".
#
# With --fence (a board shared by many hosts), FENCE holds one line "TERM_AT KILL_AT" in epoch
# seconds, which the daemon pushes forward each time it renews its lease. A watcher in this
# group enforces it even when the daemon is dead, frozen or cut off from the database: at
# TERM_AT it sends TERM to the group, at KILL_AT KILL, so the worker is gone before the lease
# runs out and another host may run the task. A missing or unreadable FENCE counts as expired.
fence=
if [ "$1" = --fence ]; then
  fence=$2
  shift 2
fi
exit_json=$1
shift
trap 'interrupted=1' TERM INT HUP
"$@" &
child=$!

watcher=
if [ -n "$fence" ]; then
  (
    trap '' TERM INT HUP
    # USR1 (the worker has ended) only marks, and interrupts the wait: the nap is killed only
    # while it is certainly this shell's own child, not yet reaped.
    stop=
    trap 'stop=1' USR1
    termed=
    while [ -z "$stop" ]; do
      term_at= kill_at=
      { read -r term_at kill_at; } <"$fence" 2>/dev/null
      case "$term_at" in '' | *[!0-9]*) term_at=0 ;; esac
      case "$kill_at" in '' | *[!0-9]*) kill_at=0 ;; esac
      now=$(date +%s)
      if [ "$now" -ge "$kill_at" ]; then
        kill -KILL 0
      fi
      if [ "$now" -ge "$term_at" ]; then
        if [ -z "$termed" ]; then
          termed=1
          kill -TERM 0
        fi
        next=$kill_at
      else
        next=$term_at
      fi
      # Read the fence again at least every 5 s: a renewal moves it forward.
      left=$((next - now))
      [ "$left" -gt 5 ] && left=5
      [ "$left" -lt 1 ] && left=1
      [ -n "$stop" ] && break
      sleep "$left" &
      nap=$!
      if [ -n "$stop" ]; then napped=129; else
        wait "$nap"
        napped=$?
      fi
      # Above 128: the wait was interrupted, the nap still runs.
      if [ "$napped" -gt 128 ]; then
        kill -KILL "$nap" 2>/dev/null
        wait "$nap" 2>/dev/null
      fi
    done
  ) &
  watcher=$!
fi

while :; do
  interrupted=
  wait "$child"
  status=$?
  # A trapped signal interrupts wait before the worker has ended: wait again.
  [ -n "$interrupted" ] || break
done
if [ -n "$watcher" ]; then
  kill -USR1 "$watcher" 2>/dev/null
  wait "$watcher"
fi
printf '{"status":%d}\n' "$status" >"$exit_json"
exit "$status"
