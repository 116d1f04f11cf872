import { describe, expect, it } from 'vitest';
import {
  listProcessGroup,
  pidExists,
  readCmdline,
  readProcStat,
  startTimeNow,
  terminateMarkedRun,
  terminateProcess,
  terminateRun,
} from '../../src/proc/index.js';
import { runTerminator } from '../../src/kanban/dispatch/run-terminator.js';
import type { RunRecord } from '../../src/kanban/store/records/run.js';
import { TEST_MARK, spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';

const fast = { graceMs: 300, killWaitMs: 2000 };
const byGroupOnly = { marker: null, groupHeldUntil: null };

/** A group leader that ignores TERM and has a grandchild that does too; prints the grandchild's pid. */
function stubbornGroup() {
  return spawnTracked([
    'sh',
    '-c',
    "trap '' TERM; sh -c \"trap '' TERM; sleep 60\" & echo $!; sleep 60 & wait",
  ]);
}

describe('terminateRun', () => {
  it('ends a whole group that ignores SIGTERM with SIGKILL and reports it', async () => {
    const leader = stubbornGroup();
    const grandchild = Number(
      await waitFor('grandchild pid', () => leader.output().trim() || null),
    );
    const result = await terminateRun(leader.identity, byGroupOnly, fast);
    expect(result).toMatchObject({ terminated: true, sigkill: true, survived: false });
    expect(result.ended).toContain(grandchild);
    expect(pidExists(grandchild)).toBe(false);
  });

  it('ends with TERM alone when the group obeys it', async () => {
    const leader = spawnTracked(['sh', '-c', 'sleep 60 & wait']);
    await waitFor('the group to have two members', () => listProcessGroup(leader.pid).length === 2);
    const result = await terminateRun(leader.identity, byGroupOnly, fast);
    expect(result).toMatchObject({ terminated: true, sigkill: false, survived: false });
  });

  it('never signals a pid whose start time does not match', async () => {
    const other = spawnTracked(['sleep', '60']);
    const recycled = { ...other.identity, startTime: other.identity.startTime - 1 };
    const result = await terminateRun(recycled, byGroupOnly, fast);
    expect(result.ended).toEqual([]);
    await expect(terminateProcess(recycled, fast)).resolves.toMatchObject({ ended: [] });
    expect(pidExists(other.pid, other.identity)).toBe(true);
  });

  it('after the leader is gone, ends only members it can prove are the run’s', async () => {
    // The leader exits at once, leaving a member of its group behind.
    const leader = spawnTracked(['sh', '-c', 'sleep 60 & echo $!']);
    const member = Number(await waitFor('member pid', () => leader.output().trim() || null));
    await leader.exited;
    expect(pidExists(member)).toBe(true);
    const unproven = await terminateRun(
      leader.identity,
      { marker: 'GATEHOUSE_RUN_ID=someone-else', groupHeldUntil: null },
      fast,
    );
    expect(unproven.ended).toEqual([]);
    expect(pidExists(member)).toBe(true);
    const proven = await terminateRun(
      leader.identity,
      { marker: TEST_MARK, groupHeldUntil: null },
      fast,
    );
    expect(proven).toMatchObject({ terminated: true, ended: [member] });
  });

  it('ends a member without the marker (env -i) that started while the group was still the run’s', async () => {
    const leader = spawnTracked(['sh', '-c', 'env -i /bin/sleep 60 & echo $!']);
    const member = Number(await waitFor('member pid', () => leader.output().trim() || null));
    await leader.exited;
    const heldUntil = startTimeNow();
    const result = await terminateRun(
      leader.identity,
      { marker: TEST_MARK, groupHeldUntil: heldUntil },
      fast,
    );
    expect(result).toMatchObject({ terminated: true, ended: [member] });
    await waitFor('the member to be gone', () => !pidExists(member));
  });

  it('ends a marked background job that left the group with setsid', async () => {
    const leader = spawnTracked(['sh', '-c', 'setsid sleep 60 & echo $!; sleep 60']);
    const job = Number(await waitFor('job pid', () => leader.output().trim() || null));
    await waitFor('the job in a session of its own', () => readProcStat(job)?.sid === job);
    const result = await terminateRun(
      leader.identity,
      { marker: TEST_MARK, groupHeldUntil: null },
      fast,
    );
    expect(result.terminated).toBe(true);
    expect(result.ended).toContain(job);
    expect(pidExists(job)).toBe(false);
  });

  it('keeps ending an unmarked member that ignores TERM after the leader died of it', async () => {
    // The leader dies at the first TERM; its env -i member ignores TERM and carries no marker.
    const leader = spawnTracked([
      'sh',
      '-c',
      `env -i /bin/sh -c "trap '' TERM; exec sleep 60" & echo $!; wait`,
    ]);
    const member = Number(await waitFor('member pid', () => leader.output().trim() || null));
    await waitFor('the member to ignore TERM', () => readCmdline(member)?.[0] === 'sleep');
    const result = await terminateRun(
      leader.identity,
      { marker: TEST_MARK, groupHeldUntil: null },
      fast,
    );
    expect(result).toMatchObject({ terminated: true, sigkill: true, survived: false });
    expect(result.ended).toContain(member);
    await waitFor('the member to be gone', () => !pidExists(member));
  });

  it('ends a run whose leader was never recorded by its run id alone', async () => {
    // The daemon died between the spawn and proc.json: the run has no pid, its processes live.
    const runId = 'r_0123456789ab';
    const orphan = spawnTracked(['sh', '-c', 'sleep 60 & wait'], {
      env: { ...process.env, GATEHOUSE_RUN_ID: runId },
    });
    await waitFor('its child', () => listProcessGroup(orphan.pid).length === 2);
    const terminator = runTerminator({ graceMs: 300, killWaitMs: 2000 });
    const unrecorded = { id: runId, pid: null, startTime: null, bootId: null } as RunRecord;
    const result = await terminator(unrecorded, null);
    expect(result).toMatchObject({ terminated: true, survived: false });
    expect(result.ended).toContain(orphan.pid);
    await waitFor('all of it gone', () => !pidExists(orphan.pid));
  });

  it('ends, with its leader not recorded, a member of its group that dropped the run id (env -i)', async () => {
    // A fence keeper told of a run before its fork (its leader unknown yet): the wrapper, a
    // session leader carrying the run id, has a child started with a clean environment.
    const runId = 'r_ba9876543210';
    const wrapper = spawnTracked(['sh', '-c', 'env -i /bin/sleep 60 & echo $!; wait'], {
      env: { ...process.env, GATEHOUSE_RUN_ID: runId },
    });
    const member = Number(await waitFor('member pid', () => wrapper.output().trim() || null));
    await waitFor('the member to be sleep', () => readCmdline(member)?.[0] === '/bin/sleep');
    const result = await terminateMarkedRun(runId, null, null, fast);
    expect(result).toMatchObject({ terminated: true, survived: false });
    expect(result.ended).toEqual(expect.arrayContaining([wrapper.pid, member]));
    await waitFor('the member to be gone', () => !pidExists(member));
  });
});
