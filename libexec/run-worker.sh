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
    # USR1 (the worker has ended) stops the watcher and ends its nap: killed only when it is
    # proven to be the nap this watcher started (its start time in /proc, read without a fork).
    stop=
    nap=
    nap_start=
    nap_ours() {
      [ -n "$nap_start" ] && read -r stat 2>/dev/null <"/proc/$nap/stat" || return 1
      set -- ${stat##*) }
      [ "${20}" = "$nap_start" ]
    }
    trap 'stop=1; nap_ours && kill -KILL "$nap" 2>/dev/null' USR1
    termed=
    while [ -z "$stop" ]; do
      term_at= kill_at=
      read -r term_at kill_at 2>/dev/null <"$fence"
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
      if read -r stat 2>/dev/null <"/proc/$nap/stat"; then
        set -- ${stat##*) }
        nap_start=${20}
      fi
      [ -z "$stop" ] && wait "$nap"
      # Stopped before or while it napped: the nap is ended (if it is still this one) and reaped.
      if [ -n "$stop" ]; then
        nap_ours && kill -KILL "$nap" 2>/dev/null
        wait "$nap" 2>/dev/null
      fi
      nap_start=
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
  # Killed by it if it comes before the watcher's trap is set (a worker that ended at once).
  kill -USR1 "$watcher" 2>/dev/null
  wait "$watcher" 2>/dev/null
fi
printf '{"status":%d}\n' "$status" >"$exit_json"
exit "$status"
