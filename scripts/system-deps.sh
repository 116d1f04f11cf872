#!/bin/sh
# The Debian packages the test suite drives, installed when missing (as Playwright's
# `install --with-deps` does): as root, or through sudo when it asks no password; otherwise it
# stops at once with the one command to run. `npm test` and .ci/run call it first.
#   chromium           the dashboard's browser tests
#   systemd-container  a real systemd booted for the unit's tests (npm run test:systemd)
#   prometheus         promtool, which checks /metrics
#   strace             shows the board syncs before it answers
#   faketime           libfaketime, which steps a daemon's wall clock for the fence's tests
#   postgresql         the board's PostgreSQL store (a throwaway cluster per run)
#   bubblewrap         the agents' sandbox (docs/sandbox.md)
set -u
need=""
command -v chromium >/dev/null 2>&1 || need="$need chromium"
command -v systemd-nspawn >/dev/null 2>&1 || need="$need systemd-container"
command -v promtool >/dev/null 2>&1 || need="$need prometheus"
command -v strace >/dev/null 2>&1 || need="$need strace"
ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || need="$need faketime"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need="$need postgresql"
command -v bwrap >/dev/null 2>&1 || need="$need bubblewrap"
command -v git >/dev/null 2>&1 || need="$need git"
[ -z "$need" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "gatehouse's tests need these packages (Debian names):$need" >&2
  echo "install them with your system's package manager, then run npm test again" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  run=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  run="sudo"
else
  echo "gatehouse's tests need:$need" >&2
  echo "run:  sudo apt-get install -y$need" >&2
  exit 1
fi
echo "installing the packages gatehouse's tests need:$need" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086 # the list is words on purpose
$run apt-get update -qq && $run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null || {
  echo "could not install:$need" >&2
  exit 1
}
