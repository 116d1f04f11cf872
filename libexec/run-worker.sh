#!/bin/sh
# run-worker.sh [--until BOOT_MS] [--cgroup DIR] [--sandbox ARGS_FILE] [--io STDIN STDOUT] EXIT_JSON PROGRAM [ARG...]
# Leads a worker run's process group: runs the worker as its child, survives the TERM sent to
# the group (the worker gets it and ends), waits for the worker, and records how it ended in
# EXIT_JSON, so a later gatehouse instance that cannot waitpid still knows. gatehouse reads the
# file only once this wrapper has exited, so a plain write (no fork for mv) is enough; a write
# cut short by SIGKILL reads as garbage, which counts as "no exit record".
# A status above 128 means "killed by signal (status - 128)".
#
# On a board shared by many hosts, the host's fence keeper (src/proc/fence-keeper.ts), a process
# outside this group, ends the run before its host's lease can run out. With --cgroup, this
# wrapper first moves itself into the run's cgroup (writing 0 to cgroup.procs moves the writer),
# so the worker and everything it starts are born there; where that fails it goes on without.
#
# With --until (a shared board), the worker is started only before BOOT_MS, milliseconds since
# boot (/proc/uptime: the clock the fence keeper ends runs by): a daemon held up between its
# lease check and this fork (SIGSTOP, a starved machine) may fork it after the lease ran out and
# another host took the task. Past it, nothing is started: EXIT_JSON says so ("started":false),
# and the run ends interrupted. The check is the last thing before the start.
#
# With --io (an agent run, docs/agents.md), the worker reads its prompt from STDIN and its stdout
# goes to STDOUT (agent.jsonl), held by this wrapper, so a daemon that restarts loses none of it.
#
# With --sandbox (docs/sandbox.md), the worker runs inside bubblewrap, whose arguments are the
# NUL-separated ARGS_FILE. bubblewrap is started with TERM, INT and HUP ignored: the TERM sent to
# the run's group then reaches the worker (given back the default by env) but not bubblewrap,
# which waits for the worker and reports its own status. When the worker ends, bubblewrap ends,
# and with it (--die-with-parent) the sandbox's pid namespace: whatever the worker left there.
until=
if [ "$1" = --until ]; then
  # Given empty, it is no number: refused below, as a deadline passed.
  until=${2:-none}
  shift 2
fi
if [ "$1" = --cgroup ]; then
  echo 0 2>/dev/null >"$2/cgroup.procs"
  shift 2
fi
sandbox=
if [ "$1" = --sandbox ]; then
  sandbox=$2
  shift 2
fi
io_in=/dev/null
io_out=
if [ "$1" = --io ]; then
  io_in=$2
  io_out=$3
  shift 3
fi
exit_json=$1
shift
if [ -n "$until" ]; then
  # The kernel prints seconds with exactly two decimals ("12.34"): its digits and a 0 are
  # milliseconds (12340). A clock that cannot be read, or a deadline that is not a number,
  # refuses the start as a deadline passed would (the test fails, status 2, and so starts nothing).
  up=
  read -r up _ 2>/dev/null </proc/uptime
  case $up in
    [0-9]*.[0-9][0-9]) now=${up%.*}${up#*.}0 ;;
    *) now= ;;
  esac
  if ! [ -n "$now" ] || ! [ "$now" -lt "$until" ] 2>/dev/null; then
    echo "gatehouse: not started: its host's lease ran out before the worker could start"
    printf '{"status":125,"started":false}\n' >"$exit_json"
    exit 125
  fi
fi
trap 'interrupted=1' TERM INT HUP
# The worker, in a subshell that becomes it (exec): no process more than "$@" & would start.
run() {
  if [ -n "$sandbox" ]; then
    trap '' TERM INT HUP
    exec bwrap --args 3 -- env --default-signal=TERM,INT,HUP "$@" 3<"$sandbox"
  fi
  exec "$@"
}
if [ -n "$io_out" ]; then
  (run "$@") <"$io_in" >>"$io_out" &
else
  (run "$@") <"$io_in" &
fi
child=$!

while :; do
  interrupted=
  wait "$child"
  status=$?
  # A trapped signal interrupts wait before the worker has ended: wait again.
  [ -n "$interrupted" ] || break
done
printf '{"status":%d}\n' "$status" >"$exit_json"
exit "$status"
