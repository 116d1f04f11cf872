import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { makeRepo } from '../helpers/git.js';
import {
  ROOT,
  pidRecord,
  runCli,
  startDaemon,
  tempDir,
  waitServing,
  writeConfig,
} from '../helpers/daemon.js';

describe('the gatehouse command line', () => {
  it('adds, lists, shows, comments on and archives tasks through the running instance', async () => {
    const dataDir = tempDir();
    // Dispatch paused: the task stays where the commands put it.
    const config = writeConfig(tempDir(), { workers: { maxConcurrent: 0 } });
    const daemon = startDaemon({ dataDir, config });
    await waitServing(dataDir, daemon.pid);
    const d = ['--data-dir', dataDir];

    const added = await runCli([
      'task',
      'add',
      'ship it',
      '--priority',
      '2',
      '--max-runtime',
      '30m',
      '--json',
      ...d,
    ]);
    expect(added.code).toBe(0);
    const task = JSON.parse(added.stdout);
    expect(task).toMatchObject({
      title: 'ship it',
      priority: 2,
      maxRuntimeSeconds: 1800,
      origin: { kind: 'cli' },
    });

    const listed = await runCli(['task', 'ls', ...d]);
    expect(listed.stdout).toContain(task.id);
    expect(listed.stdout).toContain('ship it');

    // A title from anybody (a chat) is shown to the operator, not obeyed by their terminal.
    const hostile = 'deploy \u001b]52;c;ZXZpbA==\u0007 now \u202Eevil\nfake line';
    const sneaky = await runCli(['task', 'add', hostile, '--json', ...d]);
    expect(JSON.parse(sneaky.stdout).title).toBe(hostile);
    const listedAgain = (await runCli(['task', 'ls', ...d])).stdout;
    expect(listedAgain).not.toMatch(/[\u001b\u0007\u202e]/);
    expect(listedAgain).toContain(
      'deploy \\u{1b}]52;c;ZXZpbA==\\u{7} now \\u{202e}evil\\nfake line',
    );

    const commented = await runCli(['task', 'comment', task.id, 'looks good', ...d]);
    expect(commented.code).toBe(0);
    const shown = await runCli(['task', 'show', task.id, '--json', ...d]);
    expect(JSON.parse(shown.stdout).id).toBe(task.id);

    const archived = await runCli(['task', 'archive', task.id, '--json', ...d]);
    expect(JSON.parse(archived.stdout).status).toBe('archived');
    const again = await runCli(['task', 'unblock', task.id, ...d]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('INVALID_TRANSITION');
  });

  it('sends a task in review back with changes and approves it', async () => {
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      workers: {
        tickSeconds: 0.1,
        defaultProfile: 'r',
        profiles: {
          r: {
            command: [
              '/bin/sh',
              '-c',
              `echo '{"status":"done"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
            ],
            review: true,
          },
        },
      },
    });
    const daemon = startDaemon({ dataDir, config });
    await waitServing(dataDir, daemon.pid);
    const d = ['--data-dir', dataDir];
    const task = JSON.parse((await runCli(['task', 'add', 'review me', '--json', ...d])).stdout);
    const inReview = async (runs: number) =>
      waitFor(`in review after ${runs} runs`, async () => {
        const t = JSON.parse((await runCli(['task', 'show', task.id, '--json', ...d])).stdout);
        return t.status === 'review' && t.runs.length === runs && t.runs.at(-1).endedAt ? t : null;
      });
    await inReview(1);
    const early = await runCli(['task', 'changes', task.id, ...d]);
    expect(early.code).toBe(64);
    const sent = await runCli(['task', 'changes', task.id, 'smaller', '--json', ...d]);
    expect(JSON.parse(sent.stdout)).toMatchObject({ status: 'ready', instructions: 'smaller' });
    await inReview(2);
    const approved = await runCli(['task', 'approve', task.id, '--json', ...d]);
    expect(JSON.parse(approved.stdout).status).toBe('done');
    const twice = await runCli(['task', 'approve', task.id, ...d]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('INVALID_TRANSITION');
    // A task of its own that waits for a person before its first run, though its profile does not.
    const gated = await runCli(['task', 'add', 'ask me first', '--approval', '--json', ...d]);
    expect(JSON.parse(gated.stdout)).toMatchObject({ status: 'todo', awaiting: 'approval' });
  });

  it('approves a gated task’s first run at the revision it showed, and answers a question', async () => {
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      workers: {
        tickSeconds: 0.1,
        defaultProfile: 'g',
        profiles: {
          g: {
            command: [
              '/bin/sh',
              '-c',
              `echo '{"status":"done"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
            ],
            approval: 'before_run',
          },
        },
      },
    });
    const daemon = startDaemon({ dataDir, config });
    await waitServing(dataDir, daemon.pid);
    const d = ['--data-dir', dataDir];
    const task = JSON.parse((await runCli(['task', 'add', 'gated', '--json', ...d])).stdout);
    expect(task).toMatchObject({ status: 'todo', awaiting: 'approval' });
    const bad = await runCli(['task', 'approve', task.id, '--revision', 'x', ...d]);
    expect(bad.code).toBe(64);
    const stale = await runCli(['task', 'approve', task.id, '--revision', '2', ...d]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('at revision 1');
    const approved = await runCli(['task', 'approve', task.id, '--revision', '1', '--json', ...d]);
    expect(JSON.parse(approved.stdout)).toMatchObject({ status: 'ready', awaiting: null });
    await waitFor('done', async () => {
      const t = JSON.parse((await runCli(['task', 'show', task.id, '--json', ...d])).stdout);
      return t.status === 'done' ? t : null;
    });
    const answer = await runCli(['task', 'answer', task.id, 'blue', ...d]);
    expect(answer.code).toBe(1);
    expect(answer.stderr).toContain('no question of its waits for an answer');
    expect((await runCli(['task', 'answer', task.id, ...d])).code).toBe(64);
  });

  it('adds a task for a named repository, shows its worktree and prints its diff', async () => {
    const repo = makeRepo();
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      workers: {
        tickSeconds: 0.1,
        defaultProfile: 'agent',
        profiles: {
          agent: {
            command: ['/bin/sh', '-c', 'echo "a change" >> README.md'],
            workspace: 'worktree',
            repo: 'app',
          },
        },
      },
      workspaces: { repos: { app: { path: repo } }, minFreeBytes: 0 },
    });
    const daemon = startDaemon({ dataDir, config });
    await waitServing(dataDir, daemon.pid);
    const d = ['--data-dir', dataDir];
    const added = await runCli(['task', 'add', 'edit the readme', '--repo', 'app', '--json', ...d]);
    expect(added.code).toBe(0);
    const { id } = JSON.parse(added.stdout);
    await waitFor('its run to end', async () => {
      const shown = JSON.parse((await runCli(['task', 'show', id, '--json', ...d])).stdout);
      return shown.runs[0]?.endedAt ? shown : null;
    });
    const shown = await runCli(['task', 'show', id, ...d]);
    expect(shown.stdout).toContain(
      `workspace: worktree ${join(dataDir, 'workspaces', id)} on gatehouse/${id} from main (active`,
    );
    expect(shown.stdout).toMatch(/1 files \+1 -0 \(uncommitted\)/);
    const diff = await runCli(['task', 'diff', id, ...d]);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('+a change');
    const refused = await runCli(['task', 'add', 'elsewhere', '--repo', '/etc', ...d]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('body.repo');
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  });

  it('reports status as text and JSON, stops the instance with exit 0, then says it is not running', async () => {
    const dataDir = tempDir();
    const daemon = startDaemon({ dataDir });
    await waitServing(dataDir, daemon.pid);
    const d = ['--data-dir', dataDir];

    const status = await runCli(['status', '--json', ...d]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      running: true,
      pid: daemon.pid,
      port: pidRecord(dataDir)!.port,
      ready: true,
    });
    expect((await runCli(['status', ...d])).stdout).toContain(`pid ${daemon.pid}`);

    const stop = await runCli(['stop', ...d]);
    expect(stop.code).toBe(0);
    expect((await daemon.exited).code).toBe(0);
    const after = await runCli(['status', '--json', ...d]);
    expect(after.code).toBe(3);
    expect(JSON.parse(after.stdout).running).toBe(false);
    const again = await runCli(['stop', ...d]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      `gatehouse: no instance is running for the data dir ${dataDir}; start one with 'gatehouse run', or point this command at the running one with --data-dir D, --config F or GATEHOUSE_DATA_DIR\n`,
    );
  });

  it('prints its version and each command’s usage, exit 0', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const printed = await runCli(['--version']);
    expect(printed).toMatchObject({ code: 0, stdout: `${version}\n` });
    for (const command of ['run', 'status', 'stop', 'task', 'worker']) {
      const help = await runCli([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout).toContain(`gatehouse ${command}`);
    }
    expect((await runCli(['--help'])).stdout).toContain('--data-dir D');
  });

  it('says unauthorized and exits 1 when the daemon wants a token it was not given; --token, GATEHOUSE_TOKEN and --url reach it from anywhere', async () => {
    const dataDir = tempDir();
    const token = 'cli-test-token-0123456789abcdef';
    const daemon = startDaemon({
      dataDir,
      config: writeConfig(tempDir(), { workers: { maxConcurrent: 0 } }),
      env: { GATEHOUSE_TOKEN: token },
    });
    const url = await waitServing(dataDir, daemon.pid);
    const d = ['--data-dir', dataDir];

    // The daemon's shell exported the token, this one did not.
    for (const args of [
      ['status', ...d],
      ['task', 'ls', ...d],
    ]) {
      const refused = await runCli(args);
      expect(refused.code, args.join(' ')).toBe(1);
      expect(refused.stderr).toContain(`unauthorized: the daemon at ${url} asks for its API token`);
    }
    const status = await runCli(['status', '--json', ...d], { GATEHOUSE_TOKEN: token });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, ready: true });

    // No data dir at all: the URL and the token say where and who.
    const added = await runCli([
      'task',
      'add',
      'from afar',
      '--url',
      url,
      '--token',
      token,
      '--json',
    ]);
    expect(added.code).toBe(0);
    const listed = await runCli(['task', 'ls'], { GATEHOUSE_URL: url, GATEHOUSE_TOKEN: token });
    expect(listed.stdout).toContain(JSON.parse(added.stdout).id);
    const remote = await runCli(['status', '--url', url, '--token', token]);
    expect(remote.code).toBe(0);
    expect(remote.stdout).toContain(`gatehouse serving at ${url}`);
    const nowhere = await runCli(['status', '--url', 'http://127.0.0.1:1', '--json']);
    expect(nowhere.code).toBe(3);
    expect(JSON.parse(nowhere.stdout).running).toBe(false);
    for (const bad of ['ftp://x', 'not a url', 'http://user:pw@127.0.0.1:1'])
      expect((await runCli(['task', 'ls', '--url', bad])).code, bad).toBe(64);
  });

  it('pages task ls under a header, and prints each subcommand its own help', async () => {
    const dataDir = tempDir();
    const daemon = startDaemon({
      dataDir,
      config: writeConfig(tempDir(), { workers: { maxConcurrent: 0 } }),
    });
    await waitServing(dataDir, daemon.pid);
    const d = ['--data-dir', dataDir];
    for (const title of ['one', 'two', 'three']) await runCli(['task', 'add', title, ...d]);

    const first = (await runCli(['task', 'ls', '--limit', '2', ...d])).stdout.trimEnd().split('\n');
    expect(first[0]).toMatch(/^ID +STATUS +PRIO +ASSIGNEE +TITLE$/);
    expect(first.slice(1, 3).map((l) => l.split(/ +/).at(-1))).toEqual(['one', 'two']);
    const more = /^more: add --cursor (\S+) for the next page, or --all$/.exec(first.at(-1)!);
    expect(more).not.toBeNull();
    const next = (await runCli(['task', 'ls', '--cursor', more![1]!, ...d])).stdout;
    expect(next).toContain('three');
    expect(next).not.toContain('more:');
    const all = JSON.parse(
      (await runCli(['task', 'ls', '--all', '--limit', '1', '--json', ...d])).stdout,
    );
    expect(all.tasks.map((t: { title: string }) => t.title)).toEqual(['one', 'two', 'three']);
    expect(all.nextCursor).toBeNull();

    const helps = new Set<string>();
    for (const sub of ['add', 'ls', 'show', 'archive', 'unblock', 'reclaim', 'comment', 'log']) {
      const help = await runCli(['task', sub, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout.startsWith(`gatehouse task ${sub} `)).toBe(true);
      helps.add(help.stdout);
    }
    expect(helps.size).toBe(8);
    expect((await runCli(['worker', 'block', '--help'])).stdout).toMatch(
      /^gatehouse worker block --reason R/,
    );
  });

  it('rejects bad flags and values with exit 64', async () => {
    const dataDir = tempDir();
    for (const args of [
      ['nonsense'],
      ['status', '--bogus'],
      ['task', 'add', 'x', '--max-runtime', 'soon', '--data-dir', dataDir],
      ['task', 'add', 'x', '--priority', '1.5', '--data-dir', dataDir],
      ['task'],
    ]) {
      const res = await runCli(args);
      expect(res.code, args.join(' ')).toBe(64);
      expect(res.stderr).toContain('usage');
    }
  });

  it('says an instance waiting out a crash-loop backoff is not serving yet, instead of "fetch failed"', async () => {
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      crashLoop: { maxStarts: 2, windowSeconds: 600, maxBackoffSeconds: 120 },
    });
    // Five recent unclean starts, and the pid file an unclean end leaves behind.
    const now = Date.now();
    writeFileSync(
      join(dataDir, 'starts.log'),
      [1, 2, 3, 4, 5].map((i) => `${now - i * 1000} unclean\n`).join(''),
    );
    writeFileSync(join(dataDir, 'gatehouse.pid'), '{}');
    const daemon = startDaemon({ dataDir, config });
    await waitFor('the backoff', () => daemon.output().includes('crash-loop guard'));
    const status = await runCli(['status', '--data-dir', dataDir]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`gatehouse pid ${daemon.pid}`);
    expect(status.stdout).toContain('not serving yet');
    expect(status.stderr).not.toContain('fetch failed');
  });
});
