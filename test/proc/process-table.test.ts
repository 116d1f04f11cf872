import { afterEach, describe, expect, it, vi } from 'vitest';
import { readProcStat, startTimeNow } from '../../src/proc/index.js';
import { ProcessTable } from '../../src/proc/process-table.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';

afterEach(() => vi.restoreAllMocks());

// Processes are told apart by their inodes only once the clocks have been watched a while (a
// second past this file's import, with some to spare): before that every one is read.
const watchedFrom = startTimeNow();
const watched = () =>
  waitFor('the clocks watched a while', () => startTimeNow() > watchedFrom + 150);

/** A leader whose background job left its session; both pids. */
async function leaderWithJob() {
  const leader = spawnTracked(['sh', '-c', 'setsid sleep 60 & echo $!; sleep 60']);
  const job = Number(await waitFor('job pid', () => leader.output().trim() || null));
  await waitFor('the job in a session of its own', () => readProcStat(job)?.sid === job);
  return { leader, job };
}

describe('the processes started since a leader', () => {
  it('are the leader and everything started after it, in its session or out of it', async () => {
    await watched();
    const { leader, job } = await leaderWithJob();
    const since = ProcessTable.read().since(leader.identity.startTime);
    const pids = since.map((p) => p.pid);
    expect(pids).toContain(leader.pid);
    expect(pids).toContain(job);
    // This test's own process started before the leader: not among them.
    expect(pids).not.toContain(process.pid);
    expect(since.every((p) => p.startTime >= leader.identity.startTime)).toBe(true);
  });

  it('still hold a job whose inode was made before the wall clock stepped ahead', async () => {
    await watched();
    const { leader, job } = await leaderWithJob();
    // Read once: the job's /proc inode now exists, timed on the wall clock as it was.
    expect(
      ProcessTable.read()
        .since(leader.identity.startTime)
        .map((p) => p.pid),
    ).toContain(job);
    // Ten minutes ahead, as a first NTP sync can: by the new wall clock the job's inode is old.
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 600_000);
    const pids = ProcessTable.read()
      .since(leader.identity.startTime)
      .map((p) => p.pid);
    expect(pids).toContain(leader.pid);
    expect(pids).toContain(job);
  });
});
