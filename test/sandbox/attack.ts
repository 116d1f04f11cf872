// The attacker's script for the sandbox's tests, and how to find what it left running.
import { readFileSync, readdirSync } from 'node:fs';

/** Each line: a name and a shell command that must fail inside; then the run's own work. */
export const ATTACK = `
r() { if sh -c "$2" >/dev/null 2>&1; then echo "$1 ESCAPED"; else echo "$1 blocked"; fi; }
. "$PLAN/plan.env"
{
r read-board "test -s '$DATA/gatehouse.db'"
r read-config "cat '$CONFIG'"
r read-other-run "ls '$DATA/runs/$VICTIM_RUN' | grep -q task.json"
r write-other-worktree "echo pwned > '$VICTIM_WS/pwned.txt'"
r read-daemon-environ "cat /proc/$DAEMON_PID/environ | grep -q PATH"
r signal-daemon "kill -0 $DAEMON_PID"
r signal-victim "kill -TERM $VICTIM_PID"
r read-daemon-home "for f in $HOME_FILES; do test -e '$DAEMON_HOME'/\\$f && exit 0; done; exit 1"
r umount-data "umount '$DATA'"
r plant-hook "echo 'touch $PLAN/hook-ran' > '$REPO/.git/hooks/post-commit' && chmod +x '$REPO/.git/hooks/post-commit'"
r plant-config "git config --file '$REPO/.git/config' core.fsmonitor 'touch $PLAN/fsmonitor-ran'"
r move-main "git update-ref refs/heads/main HEAD"
r delete-victim-branch "git update-ref -d refs/heads/gatehouse/$VICTIM_ID"
r remove-old-objects "test -n \\"\\$(ls '$REPO/.git/objects' | grep -v info)\\" && rm -rf '$REPO'/.git/objects/?? '$REPO'/.git/objects/pack && test -z \\"\\$(git -C '$REPO' cat-file -t $BASE 2>/dev/null)\\""
r write-host-tmp "echo x > /tmp/escaped-$TASK && test -e '$PLAN/../escaped-$TASK'"
r write-repo-checkout "echo x > '$REPO/README.md'"
} > escapes.txt
env -i setsid sh -c 'exec sleep 4242' >/dev/null 2>&1 &
echo "the run's own work" > work.txt
git add work.txt escapes.txt && git commit -q -m "work from inside the sandbox"
printf '{"status":"done","summary":"attacked"}' > "$GATEHOUSE_RUN_DIR/result.json"
`;

export function processesMatching(text: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}
