// A workspace of its own for every task (docs/workspaces.md), with real git repositories and real workers:
// worktrees made at the first claim and kept across runs, evidence per run, a run that touched
// the repository's own checkout held for a person, and cleanup that keeps every change.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, startGateway, type TestGateway } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { gitCode, gitOut, makeRepo } from '../helpers/git.js';
import { waitFor } from '../helpers/wait.js';
import { pidExists } from '../../src/proc/index.js';
import { createTask, eventsOf, getTask, settledIn, ticksPass } from '../helpers/workers.js';

const fast = { tickSeconds: 0.1, killGraceSeconds: 0.3, failureLimit: 2, maxConcurrent: 20 };
const IDENTITY = {
  GIT_AUTHOR_NAME: 'agent',
  GIT_AUTHOR_EMAIL: 'agent@localhost',
  GIT_COMMITTER_NAME: 'agent',
  GIT_COMMITTER_EMAIL: 'agent@localhost',
};

/** A worker that runs `script` in sh, then reports done with `summary` (result.json). */
function shWorker(script: string, extra: object = {}) {
  return {
    command: [
      '/bin/sh',
      '-c',
      `set -e\n${script}\nprintf '{"status":"done","summary":"%s"}' "\${SUMMARY:-ok}" > "$GATEHOUSE_RUN_DIR/result.json"`,
    ],
    env: IDENTITY,
    workspace: 'worktree',
    repo: 'app',
    maxConcurrent: 20,
    ...extra,
  };
}

async function gatewayOn(
  repo: string,
  profiles: Record<string, object>,
  repoExtra: object = {},
): Promise<TestGateway> {
  return startGateway(
    {
      workers: { ...fast, defaultProfile: Object.keys(profiles)[0], profiles },
      workspaces: { repos: { app: { path: repo, base: 'main', ...repoExtra } }, minFreeBytes: 0 },
    },
    { dispatch: true },
  );
}

const archive = (gw: TestGateway, id: string) => api(gw.url, 'POST', `/tasks/${id}/archive`, {});

function retired(gw: TestGateway, id: string, state: 'preserved' | 'removed') {
  return waitFor(`task ${id}'s workspace ${state}`, async () => {
    const task = await getTask(gw, id);
    return task.workspace?.state === state ? task : null;
  });
}

describe('workspaces', () => {
  it('gives each of 20 tasks claimed at once on one repository a worktree of its own, with each run’s evidence', async () => {
    const repo = makeRepo();
    const gw = await gatewayOn(repo, {
      agent: shWorker(
        // Each writes its own id, waits for the others to have written theirs, and reads it back.
        'echo "$GATEHOUSE_TASK_ID" > mine.txt\nsleep 0.3\nSUMMARY="$(cat mine.txt) $PWD $GATEHOUSE_BRANCH $GATEHOUSE_BASE"',
      ),
    });
    const ids = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => (await createTask(gw, { title: `t${i}` })).id),
    );
    const root = join(gw.dataDir, 'workspaces');
    for (const id of ids) {
      const task = await settledIn(gw, id, 'done', 60_000);
      const path = join(root, id);
      // Its own file, in its own directory, on its own branch: nobody overwrote anybody.
      expect(task.summary).toBe(`${id} ${path} gatehouse/${id} main`);
      expect(task.workspace).toEqual({
        kind: 'worktree',
        path,
        repo: 'app',
        branch: `gatehouse/${id}`,
        base: 'main',
        host: gw.config.cluster.hostName,
        state: 'active',
        preservedRef: null,
      });
      const head = gitOut(repo, 'rev-parse', 'main');
      expect(task.runs[0].workspace).toEqual({
        headBefore: head,
        headAfter: head,
        dirty: true,
        filesChanged: 1,
        insertions: 1,
        deletions: 0,
      });
    }
    const listed = gitOut(repo, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree '));
    expect(listed).toHaveLength(21);
    // The repository's own checkout is as it was.
    expect(gitOut(repo, 'status', '--porcelain')).toBe('');
  });

  it('runs a retry after a crash in the same worktree, with what the crashed run left', async () => {
    const repo = makeRepo();
    const gw = await gatewayOn(repo, {
      agent: shWorker(
        'if [ ! -f attempt ]; then echo one > attempt; git add attempt; git commit -qm one; exit 1; fi\nSUMMARY="second saw $(cat attempt)"',
      ),
    });
    const { id } = await createTask(gw, { title: 'crash then retry' });
    const task = await settledIn(gw, id, 'done', 30_000);
    expect(task.summary).toBe('second saw one');
    expect(task.runs.map((r: { outcome: string }) => r.outcome)).toEqual(['crashed', 'completed']);
    const [first, second] = task.runs;
    // The second run started where the first left: its commit, on the task's branch.
    expect(second.workspace.headBefore).toBe(first.workspace.headAfter);
    expect(first.workspace.headAfter).toBe(gitOut(repo, 'rev-parse', `gatehouse/${id}`));
    expect(second.workspace).toMatchObject({ filesChanged: 1, insertions: 1, dirty: false });
  });

  it('shows the worktree’s change against its base as a diff, committed or not', async () => {
    const repo = makeRepo();
    const gw = await gatewayOn(repo, {
      agent: shWorker(
        'echo changed >> README.md\ngit commit -qam edit\necho new > untracked.txt\necho more >> src/app.js',
      ),
      plain: { command: ['/bin/true'] },
    });
    const { id } = await createTask(gw, { title: 'diff' });
    await settledIn(gw, id, 'done');
    const res = await fetch(`${gw.url}/tasks/${id}/diff`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/x-diff/);
    const diff = await res.text();
    expect(diff).toContain('+++ b/README.md');
    expect(diff).toContain('+changed');
    expect(diff).toContain('+++ b/untracked.txt');
    expect(diff).toContain('+more');
    // The worktree's own index was not touched: the untracked file is still untracked.
    // (gitOut trims: " M" reads "M".)
    expect(gitOut(join(gw.dataDir, 'workspaces', id), 'status', '--porcelain')).toBe(
      'M src/app.js\n?? untracked.txt',
    );
    const none = await createTask(gw, { title: 'no worktree', assignee: 'plain' });
    await settledIn(gw, none.id, 'blocked');
    const missing = await api(gw.url, 'GET', `/tasks/${none.id}/diff`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('WORKSPACE_NOT_FOUND');
  });

  it('keeps every change of an archived task’s worktree on refs/gatehouse/preserved/<id> before removing it, and keeps its unmerged branch', async () => {
    const repo = makeRepo();
    const gw = await gatewayOn(repo, {
      agent: shWorker(
        'echo committed > done.txt\ngit add done.txt\ngit commit -qm work\necho edited >> README.md\nmkdir -p notes\necho draft > notes/untracked.md',
      ),
    });
    const { id } = await createTask(gw, { title: 'dirty' });
    const done = await settledIn(gw, id, 'done');
    const path = done.workspace.path;
    expect((await archive(gw, id)).status).toBe(200);
    const task = await retired(gw, id, 'preserved');
    const ref = `refs/gatehouse/preserved/${id}`;
    expect(task.workspace.preservedRef).toBe(ref);
    expect(existsSync(path)).toBe(false);
    // Every file is in the preserved commit: the committed, the edited and the untracked one.
    expect(gitOut(repo, 'show', `${ref}:done.txt`)).toBe('committed');
    expect(gitOut(repo, 'show', `${ref}:README.md`)).toBe('# app\nedited');
    expect(gitOut(repo, 'show', `${ref}:notes/untracked.md`)).toBe('draft');
    // The branch has a commit that is not in main: kept. Nobody's stash was used.
    expect(gitCode(repo, 'rev-parse', '--verify', `refs/heads/gatehouse/${id}`)).toBe(0);
    expect(gitOut(repo, 'stash', 'list')).toBe('');
    expect(gitOut(repo, 'worktree', 'list', '--porcelain')).not.toContain(path);
    const kinds = (await eventsOf(gw, id)).map((e) => e.kind);
    expect(kinds).toContain('workspace_preserved');
    expect(kinds).toContain('workspace_removed');
  });

  it('removes a clean worktree whose branch is in the base, branch and all, keeping nothing', async () => {
    const repo = makeRepo();
    const gw = await gatewayOn(repo, { agent: shWorker('true') });
    const { id } = await createTask(gw, { title: 'clean' });
    const done = await settledIn(gw, id, 'done');
    await archive(gw, id);
    const task = await retired(gw, id, 'removed');
    expect(task.workspace.preservedRef).toBeNull();
    expect(existsSync(done.workspace.path)).toBe(false);
    expect(gitCode(repo, 'rev-parse', '--verify', `refs/heads/gatehouse/${id}`)).not.toBe(0);
    expect(gitCode(repo, 'rev-parse', '--verify', `refs/gatehouse/preserved/${id}`)).not.toBe(0);
  });

  it('never follows a link a worker planted in its worktree out of the root', async () => {
    const repo = makeRepo();
    const outside = tempDir('gatehouse-outside-');
    mkdirSync(join(outside, 'precious'));
    writeFileSync(join(outside, 'precious', 'file'), 'keep me');
    const gw = await gatewayOn(repo, {
      agent: shWorker(
        `ln -s ${outside}/precious link-to-dir\nln -s ${outside}/precious/file link-to-file`,
      ),
    });
    const { id } = await createTask(gw, { title: 'links' });
    await settledIn(gw, id, 'done');
    await archive(gw, id);
    const task = await retired(gw, id, 'preserved');
    expect(readFileSync(join(outside, 'precious', 'file'), 'utf8')).toBe('keep me');
    // Kept as links, not as what they point to.
    const ref = task.workspace.preservedRef;
    expect(gitOut(repo, 'cat-file', '-p', `${ref}:link-to-file`)).toBe(`${outside}/precious/file`);
  });

  it('blocks a run that changed the repository’s own checkout, with a workspace_escape naming the paths', async () => {
    const repo = makeRepo();
    const gw = await gatewayOn(repo, {
      agent: shWorker(`echo oops >> ${repo}/README.md\necho stray > ${repo}/stray.txt`),
    });
    const { id } = await createTask(gw, { title: 'escape' });
    const task = await settledIn(gw, id, 'blocked');
    expect(task.blockReason).toBe("the repository's own checkout changed while it ran");
    const escape = (await eventsOf(gw, id)).find((e) => e.kind === 'workspace_escape');
    expect(escape?.payload).toEqual({ repo: 'app', paths: ['README.md', 'stray.txt'] });
  });

  it('fails a run whose repository setup fails, with its exit code and output in the log; the next run makes the worktree again', async () => {
    const repo = makeRepo();
    const flag = join(tempDir(), 'second');
    const gw = await gatewayOn(
      repo,
      { agent: shWorker('SUMMARY="setup said $(cat .setup-ran)"') },
      {
        setup: [
          '/bin/sh',
          '-c',
          `echo setting up; if [ ! -f ${flag} ]; then touch ${flag}; exit 3; fi; echo twice > .setup-ran`,
        ],
        copy: ['README.md'],
      },
    );
    const { id } = await createTask(gw, { title: 'setup' });
    const task = await settledIn(gw, id, 'done', 30_000);
    expect(task.runs[0].outcome).toBe('spawn_failed');
    expect(task.runs[0].error).toMatch(/setup .* exited with code 3/);
    const log = (await api(gw.url, 'GET', `/runs/${task.runs[0].id}/log`)).body as string;
    expect(log).toContain('setting up');
    expect(task.runs[1].outcome).toBe('completed');
    expect(task.summary).toBe('setup said twice');
  });

  it('never takes over a branch gatehouse/<id> a person made: the task fails naming it, and archiving leaves it', async () => {
    const repo = makeRepo();
    const gate = join(tempDir(), 'go');
    const gw = await gatewayOn(repo, {
      agent: shWorker(`while [ ! -f ${gate} ]; do sleep 0.05; done`),
    });
    const parent = await createTask(gw, { title: 'waits for the gate' });
    const { id } = await createTask(gw, { title: 'its branch is taken', parents: [parent.id] });
    // A person's branch of the name the task will want, with their commit on it.
    gitOut(repo, 'branch', `gatehouse/${id}`, 'main');
    const theirs = join(tempDir(), 'theirs');
    gitOut(repo, 'worktree', 'add', '-q', theirs, `gatehouse/${id}`);
    writeFileSync(join(theirs, 'theirs.txt'), 'a person’s work');
    gitOut(theirs, 'add', 'theirs.txt');
    gitOut(theirs, '-c', 'user.name=p', '-c', 'user.email=p@x', 'commit', '-qm', 'theirs');
    gitOut(repo, 'worktree', 'remove', theirs);
    const tip = gitOut(repo, 'rev-parse', `gatehouse/${id}`);
    writeFileSync(gate, '');
    const task = await waitFor('the task to stop trying', async () => {
      const t = await getTask(gw, id);
      return ['failed', 'blocked'].includes(t.status) ? t : null;
    });
    expect(task.runs.length).toBeGreaterThan(0);
    expect(task.runs[0].error).toMatch(
      new RegExp(`a branch gatehouse/${id} exists in app that gatehouse did not make`),
    );
    expect(existsSync(join(gw.dataDir, 'workspaces', id))).toBe(false);
    expect((await archive(gw, id)).status).toBe(200);
    await ticksPass(gw);
    // Their branch is where they left it.
    expect(gitOut(repo, 'rev-parse', `gatehouse/${id}`)).toBe(tip);
    expect(gitOut(repo, 'show', `gatehouse/${id}:theirs.txt`)).toBe('a person’s work');
  });

  it('blocks a run whose worktree was removed while it ran, and tells the next run it was made again', async () => {
    const repo = makeRepo();
    const gw = await gatewayOn(repo, {
      agent: shWorker(
        [
          'if [ -f "${GATEHOUSE_INSTRUCTIONS_FILE:-/nonexistent}" ]; then SUMMARY="$(cat "$GATEHOUSE_INSTRUCTIONS_FILE" | tr -d \'\n"\')"',
          'else echo unsaved > work.txt; dir="$PWD"; cd /; rm -rf "$dir"; fi',
        ].join('\n'),
      ),
    });
    const { id } = await createTask(gw, { title: 'loses its worktree' });
    const blocked = await settledIn(gw, id, 'blocked');
    expect(blocked.runs[0].outcome).toBe('blocked');
    expect(blocked.blockReason).toMatch(/its workspace .* was gone when the run ended/);
    const lost = (await eventsOf(gw, id)).filter((e) => e.kind === 'workspace_lost');
    expect(lost).toEqual([
      expect.objectContaining({ payload: { path: join(gw.dataDir, 'workspaces', id) } }),
    ]);
    expect((await api(gw.url, 'POST', `/tasks/${id}/unblock`, {})).status).toBe(200);
    const done = await settledIn(gw, id, 'done');
    expect(done.summary).toMatch(/workspace was lost .* made again from its branch gatehouse\//);
    expect(existsSync(join(gw.dataDir, 'workspaces', id))).toBe(true);
  });

  it('runs four setups of one repository side by side, each bounded by its profile’s maxRuntimeSeconds', async () => {
    const repo = makeRepo();
    const times = join(tempDir(), 'times');
    mkdirSync(times);
    const gw = await gatewayOn(
      repo,
      // The bound leaves a loaded machine time to make four worktrees and start their setups.
      { agent: shWorker('true', { maxRuntimeSeconds: 12 }) },
      {
        setup: [
          '/bin/sh',
          '-c',
          // Each waits for all four to have started: one after another, none would finish.
          `touch ${times}/$GATEHOUSE_TASK_ID; while [ "$(ls ${times} | wc -l)" -lt 4 ]; do sleep 0.05; done; if [ -f ${times}/slow ]; then sleep 30; fi`,
        ],
      },
    );
    const ids = await Promise.all(
      [1, 2, 3, 4].map(async (i) => (await createTask(gw, { title: `setup ${i}` })).id),
    );
    for (const id of ids)
      expect((await settledIn(gw, id, 'done', 30_000)).runs[0].outcome).toBe('completed');
    // One more whose setup outlives the profile's bound: ended, and its run says so.
    writeFileSync(join(times, 'slow'), '');
    const { id } = await createTask(gw, { title: 'slow setup' });
    const task = await waitFor(
      'the slow setup to be ended',
      async () => {
        const t = await getTask(gw, id);
        return t.runs[0]?.endedAt ? t : null;
      },
      30_000,
    );
    expect(task.runs[0].outcome).toBe('spawn_failed');
    expect(task.runs[0].error).toMatch(/was ended after 12 s \(the profile's maxRuntimeSeconds\)/);
  });

  it('ends a setup when its task is archived: the whole setup goes, the archive takes effect, no second setup', async () => {
    const repo = makeRepo();
    const pids = join(tempDir(), 'pids');
    const gw = await gatewayOn(
      repo,
      { agent: shWorker('true') },
      { setup: ['/bin/sh', '-c', `sleep 60 & echo $! >> ${pids}; echo $$ >> ${pids}; wait`] },
    );
    const { id } = await createTask(gw, { title: 'archived in setup' });
    const started = await waitFor('the setup to have started', () => {
      const lines = existsSync(pids) ? readFileSync(pids, 'utf8').trim().split('\n') : [];
      return lines.length === 2 ? lines.map(Number) : null;
    });
    const t0 = Date.now();
    const archived = await archive(gw, id);
    expect(archived.body).toMatchObject({ id, status: 'archived' });
    expect(Date.now() - t0).toBeLessThan(5000);
    await waitFor('the setup and its child to be gone', () =>
      started.every((pid) => !pidExists(pid)),
    );
    const task = await waitFor('the task archived, its run ended', async () => {
      const t = await getTask(gw, id);
      return t.status === 'archived' && t.runs.every((r: { endedAt: number | null }) => r.endedAt)
        ? t
        : null;
    });
    expect(task.runs).toHaveLength(1);
    await ticksPass(gw);
    expect(readFileSync(pids, 'utf8').trim().split('\n')).toHaveLength(2);
    // Its half-made worktree is an orphan now: removed, with the branch made for it.
    await gw.reconciler.pass();
    expect(existsSync(join(gw.dataDir, 'workspaces', id))).toBe(false);
    expect(gitCode(repo, 'rev-parse', '--verify', '--quiet', `gatehouse/${id}`)).not.toBe(0);
  });

  it('ends a setup at the daemon’s stop, its run interrupted (not counted), made again at the next start', async () => {
    const repo = makeRepo();
    const pids = join(tempDir(), 'pids');
    const slow = join(tempDir(), 'slow');
    writeFileSync(slow, '');
    const profiles = { agent: shWorker('SUMMARY="after $(cat .setup-ran)"') };
    const setup = {
      setup: [
        '/bin/sh',
        '-c',
        `if [ -f ${slow} ]; then sleep 60 & echo $! >> ${pids}; echo $$ >> ${pids}; wait; fi; echo yes > .setup-ran`,
      ],
    };
    const gw = await gatewayOn(repo, profiles, setup);
    const { id } = await createTask(gw, { title: 'stopped in setup' });
    const started = await waitFor('the setup to have started', () => {
      const lines = existsSync(pids) ? readFileSync(pids, 'utf8').trim().split('\n') : [];
      return lines.length === 2 ? lines.map(Number) : null;
    });
    await gw.close();
    expect(started.filter((pid) => pidExists(pid))).toEqual([]);
    rmSync(slow);
    const again = await startGateway(
      {
        workers: { ...fast, defaultProfile: 'agent', profiles },
        workspaces: { repos: { app: { path: repo, base: 'main', ...setup } }, minFreeBytes: 0 },
      },
      { dispatch: true, dataDir: gw.dataDir },
    );
    const task = await settledIn(again, id, 'done');
    expect(task.runs.map((r: { outcome: string }) => r.outcome)).toEqual([
      'interrupted',
      'completed',
    ]);
    expect(task.summary).toBe('after yes');
  });

  it('makes a task’s worktree from the repository it names, and refuses any other name, a path, or a profile without worktrees', async () => {
    const app = makeRepo();
    const web = makeRepo({ 'index.html': '<p>web</p>\n' });
    const gw = await startGateway(
      {
        workers: {
          ...fast,
          defaultProfile: 'agent',
          profiles: {
            agent: shWorker('SUMMARY="$(ls | tr "\\n" " ")"'),
            plain: { command: ['/bin/true'] },
          },
        },
        workspaces: { repos: { app: { path: app }, web: { path: web } }, minFreeBytes: 0 },
      },
      { dispatch: true },
    );
    const { id } = await createTask(gw, { title: 'web work', repo: 'web' });
    const task = await settledIn(gw, id, 'done');
    expect(task.repo).toBe('web');
    expect(task.workspace).toMatchObject({ repo: 'web', branch: `gatehouse/${id}` });
    expect(task.summary).toBe('index.html ');
    expect(gitOut(web, 'rev-parse', '--verify', `gatehouse/${id}`)).toMatch(/^[0-9a-f]{40}$/);
    const before = (await api(gw.url, 'GET', '/tasks')).body.tasks.length;
    for (const [body, message] of [
      [
        { title: 'x', repo: 'nope' },
        /repo: "nope" is not a repository in workspaces.repos \(app, web\)/,
      ],
      [{ title: 'x', repo: app }, /body.repo/],
      [{ title: 'x', repo: '../app' }, /body.repo/],
      [
        { title: 'x', repo: 'app', assignee: 'plain' },
        /profile "plain" gives its tasks no worktree/,
      ],
    ] as const) {
      const res = await api(gw.url, 'POST', '/tasks', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message).toMatch(message);
    }
    // Nothing was made by a refused request.
    expect((await api(gw.url, 'GET', '/tasks')).body.tasks.length).toBe(before);
  });

  it('gives a scratch profile an empty directory, kept as a tar when it is archived with files in it', async () => {
    const gw = await startGateway(
      {
        workers: {
          ...fast,
          defaultProfile: 'scratch',
          profiles: {
            scratch: {
              command: [
                '/bin/sh',
                '-c',
                'test -z "$(ls -A)" && pwd > "$GATEHOUSE_RUN_DIR/../../where" && echo out > report.txt; echo "{\\"status\\":\\"done\\",\\"summary\\":\\"$GATEHOUSE_WORKSPACE\\"}" > "$GATEHOUSE_RUN_DIR/result.json"',
              ],
              workspace: 'scratch',
            },
            empty: {
              command: [
                '/bin/sh',
                '-c',
                'echo "{\\"status\\":\\"done\\"}" > "$GATEHOUSE_RUN_DIR/result.json"',
              ],
              workspace: 'scratch',
            },
          },
        },
        workspaces: { minFreeBytes: 0 },
      },
      { dispatch: true },
    );
    const { id } = await createTask(gw, { title: 'scratch' });
    const done = await settledIn(gw, id, 'done');
    const path = join(gw.dataDir, 'workspaces', id);
    expect(done.summary).toBe(path);
    expect(done.workspace).toMatchObject({ kind: 'scratch', path, repo: null, branch: null });
    expect(readFileSync(join(gw.dataDir, 'where'), 'utf8').trim()).toBe(path);
    await archive(gw, id);
    const kept = await retired(gw, id, 'preserved');
    const tar = kept.workspace.preservedRef;
    expect(tar).toMatch(
      new RegExp(`^${join(gw.dataDir, 'workspaces', '.preserved', id)}-\\d+\\.tar$`),
    );
    expect(existsSync(path)).toBe(false);
    expect(execFileSync('tar', ['-xOf', tar, `${id}/report.txt`], { encoding: 'utf8' })).toBe(
      'out\n',
    );
    const nothing = await createTask(gw, { title: 'empty', assignee: 'empty' });
    await settledIn(gw, nothing.id, 'done');
    await archive(gw, nothing.id);
    expect((await retired(gw, nothing.id, 'removed')).workspace.preservedRef).toBeNull();
  });

  it('makes no workspace below workspaces.minFreeBytes: its tasks wait in ready and /ready says why, others run', async () => {
    const repo = makeRepo();
    const gw = await startGateway(
      {
        workers: {
          ...fast,
          defaultProfile: 'agent',
          profiles: { agent: shWorker('true'), plain: { command: ['/bin/true'] } },
        },
        // More than any disk has.
        workspaces: { repos: { app: { path: repo } }, minFreeBytes: Number.MAX_SAFE_INTEGER },
      },
      { dispatch: true },
    );
    const waiting = await createTask(gw, { title: 'needs a worktree' });
    const plain = await createTask(gw, { title: 'needs nothing', assignee: 'plain' });
    await settledIn(gw, plain.id, 'blocked');
    await ticksPass(gw, 5);
    const task = await getTask(gw, waiting.id);
    expect(task.status).toBe('ready');
    expect(task.runs).toEqual([]);
    const ready = (await api(gw.url, 'GET', '/ready')).body;
    expect(ready.subsystems.workspaces).toEqual({
      status: 'degraded',
      detail: expect.stringMatching(/below workspaces.minFreeBytes .*no new workspace is made/),
    });
    expect(existsSync(join(gw.dataDir, 'workspaces', waiting.id))).toBe(false);
  });

  it('retires a done task’s workspace workspaces.keepDays after it was done, its changes preserved first', async () => {
    const repo = makeRepo();
    const gw = await startGateway(
      {
        workers: {
          ...fast,
          defaultProfile: 'agent',
          profiles: { agent: shWorker('echo kept > work.txt') },
        },
        // About a second.
        workspaces: { repos: { app: { path: repo } }, minFreeBytes: 0, keepDays: 0.00001 },
      },
      { dispatch: true },
    );
    const { id } = await createTask(gw, { title: 'done long ago' });
    const done = await settledIn(gw, id, 'done');
    expect(done.workspace.state).toBe('active');
    const kept = await waitFor('its workspace retired', async () => {
      await gw.reconciler.pass();
      const task = await getTask(gw, id);
      return task.workspace.state === 'preserved' ? task : null;
    });
    expect(kept.status).toBe('done');
    expect(gitOut(repo, 'show', `${kept.workspace.preservedRef}:work.txt`)).toBe('kept');
    expect(existsSync(done.workspace.path)).toBe(false);
  });

  it('lists a worktree made a moment ago, and drops one removed a moment ago', async () => {
    const repo = makeRepo();
    const gw = await gatewayOn(repo, { agent: shWorker('echo mine > mine.txt') });
    const list = async () =>
      ((await api(gw.url, 'GET', '/workspaces')).body.workspaces as { taskId: string }[]).map(
        (w) => w.taskId,
      );
    expect(await list()).toEqual([]);
    const { id } = await createTask(gw, { title: 'listed at once' });
    await settledIn(gw, id, 'done');
    expect(await list()).toEqual([id]);
    expect((await archive(gw, id)).status).toBe(200);
    await retired(gw, id, 'preserved');
    expect(await list()).toEqual([]);
  });

  it('reconciles the root with the board: an orphan worktree preserved then removed, one deleted by hand pruned, a stranger left alone', async () => {
    const repo = makeRepo();
    const gw = await gatewayOn(repo, { agent: shWorker('echo mine > mine.txt') });
    const { id } = await createTask(gw, { title: 'kept' });
    const done = await settledIn(gw, id, 'done');
    const root = join(gw.dataDir, 'workspaces');
    // A worktree no task wants (its task long deleted), with work in it.
    const orphan = 't_00000000beef';
    gitOut(repo, 'worktree', 'add', '-q', '-b', `gatehouse/${orphan}`, join(root, orphan), 'main');
    writeFileSync(join(root, orphan, 'unsaved.txt'), 'only here');
    // A worktree deleted by hand, which git still lists.
    const gone = await createTask(gw, { title: 'gone' });
    const goneTask = await settledIn(gw, gone.id, 'done');
    rmSync(goneTask.workspace.path, { recursive: true });
    // Not gatehouse's.
    mkdirSync(join(root, 'notes'));
    writeFileSync(join(root, 'notes', 'todo.txt'), 'mine, not yours');

    const seen = (await api(gw.url, 'GET', '/workspaces')).body.workspaces;
    expect(seen).toHaveLength(3);
    expect(seen).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          taskId: null,
          path: join(root, 'notes'),
          kind: 'unknown',
          state: 'unknown',
        }),
        expect.objectContaining({
          taskId: orphan,
          kind: 'worktree',
          state: 'orphaned',
          dirty: true,
        }),
        expect.objectContaining({
          taskId: id,
          path: done.workspace.path,
          kind: 'worktree',
          state: 'active',
          dirty: true,
          host: gw.config.cluster.hostName,
        }),
      ]),
    );
    await gw.reconciler.pass();
    // The orphan's work is on its preserved ref before the directory went.
    expect(gitOut(repo, 'show', `refs/gatehouse/preserved/${orphan}:unsaved.txt`)).toBe(
      'only here',
    );
    expect(existsSync(join(root, orphan))).toBe(false);
    // git no longer lists the one deleted by hand; the stranger and the active one are there.
    const listed = gitOut(repo, 'worktree', 'list', '--porcelain');
    expect(listed).not.toContain(goneTask.workspace.path);
    expect(listed).toContain(done.workspace.path);
    expect(readFileSync(join(root, 'notes', 'todo.txt'), 'utf8')).toBe('mine, not yours');
    const after = (await gw.reconciler.pass()).map((w) => [w.taskId, w.state]);
    expect(after).toHaveLength(2);
    expect(after).toEqual(
      expect.arrayContaining([
        [id, 'active'],
        [null, 'unknown'],
      ]),
    );
    const metrics = (await api(gw.url, 'GET', '/metrics')).body as string;
    expect(metrics).toMatch(/gatehouse_workspaces\{state="active"\} 1/);
    expect(metrics).toMatch(/gatehouse_workspace_bytes\{state="active"\} [1-9]/);
  });
});
