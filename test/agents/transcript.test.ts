// A run's transcript (docs/mcp.md), read from what the real Claude Code and Codex print as they
// work, their models scripted by the provider doubles: followed live with `gatehouse task log
// --follow` from another machine's view (--url), then read whole through the API, readable and
// raw. Both engines.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { api, startGateway } from '../helpers/app.js';
import {
  ENDS_AGENTS,
  claudeProfile,
  codexProfile,
  gatehouseCall,
  shellCall,
} from '../helpers/agents.js';
import { BIN, ROOT, cleanEnv, runCli } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/git.js';
import { anthropicDouble, openaiDouble } from '../helpers/model-doubles.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';
import { getTask, settledIn } from '../helpers/workers.js';

describe.each(['claude', 'codex'] as const)('the transcript of a %s run', (kind) => {
  it('is followed live as the agent works, then read whole, readable or raw', async () => {
    const double = await (kind === 'claude' ? anthropicDouble() : openaiDouble());
    double.script = (_req, turn) => {
      const steps = [
        shellCall(kind, 'ls && echo hello > hello.txt'),
        gatehouseCall(kind, 'report_progress', { note: 'wrote hello.txt', percent: 50 }),
        shellCall(kind, 'cat missing-file'),
        // Waits in its worktree until the test lets it go on.
        shellCall(kind, 'until [ -f go ]; do sleep 0.1; done; echo let go'),
      ];
      return steps[turn] ?? { text: 'Done: hello.txt is written.' };
    };
    const make = kind === 'claude' ? claudeProfile : codexProfile;
    const gw = await startGateway(
      {
        ...ENDS_AGENTS,
        workers: {
          tickSeconds: 0.1,
          killGraceSeconds: 0.5,
          defaultProfile: 'agent',
          profiles: {
            agent: make(double, {}, { workspace: 'worktree', repo: 'app', mcp: { enabled: true } }),
          },
        },
        workspaces: { repos: { app: { path: makeRepo() } }, minFreeBytes: 0 },
      },
      { dispatch: true },
    );
    const { id } = (await api(gw.url, 'POST', '/tasks', { title: 'write hello' })).body;
    const running = await waitFor(
      'the task to run in its worktree',
      async () => {
        const task = await getTask(gw, id);
        return task.status === 'running' && task.workspace ? task : null;
      },
      30_000,
    );
    const follow = spawnTracked(
      [process.execPath, BIN, 'task', 'log', id, '--follow', '--url', gw.url],
      {
        cwd: ROOT,
        env: cleanEnv(),
      },
    );
    // Pushed over its websocket as the agent prints, and closed once the run has ended.
    const pushed: { entries: { kind: string; text?: string }[]; ended: boolean }[] = [];
    const socket = new WebSocket(
      `${gw.url.replace('http', 'ws')}/runs/${running.currentRunId}/transcript/stream`,
    );
    socket.on('message', (data: Buffer) => pushed.push(JSON.parse(data.toString('utf8'))));
    const socketClosed = new Promise<number>((resolve) => socket.on('close', resolve));
    const pushedEntries = () => pushed.flatMap((m) => m.entries);
    // Live: the failed command is shown while the agent still waits, and its answer is not.
    await waitFor(
      'the follower to show the failed command',
      () => follow.stdout().includes('missing-file'),
      60_000,
    );
    expect(follow.stdout()).toContain('… progress: 50% wrote hello.txt');
    expect(follow.stdout()).not.toContain('Done: hello.txt is written.');
    expect((await getTask(gw, id)).status).toBe('running');
    await waitFor('the failed command pushed', () =>
      pushedEntries().some(
        (e) => e.kind === 'tool_result' && JSON.stringify(e).includes('missing-file'),
      ),
    );
    expect(pushedEntries().some((e) => e.kind === 'text')).toBe(false);
    writeFileSync(join(running.workspace.path, 'go'), '');
    const { code } = await follow.closed;
    expect(code, follow.stderr()).toBe(0);
    const task = await settledIn(gw, id, 'done', 60_000);
    const followed = follow.stdout();
    expect(followed).toMatch(/→ \S+ .*ls && echo hello > hello\.txt/);
    expect(followed).toMatch(/← ok\n {4}README\.md/);
    expect(followed).toMatch(/✗ failed\n(.*\n)*? {4}.*missing-file: No such file or directory/);
    expect(followed).toContain('let go');
    expect(followed.trimEnd().endsWith('Done: hello.txt is written.')).toBe(true);

    // Through the API, whole: each call, its output, the progress, the failure, the answer.
    const run = task.runs[0];
    const whole = (await api(gw.url, 'GET', `/runs/${run.id}/transcript`)).body;
    expect(whole.kind).toBe(kind);
    expect(whole.ended).toBe(true);
    const entries = whole.entries.filter((e: { kind: string }) => e.kind !== 'error');
    expect(entries.map((e: { kind: string }) => e.kind)).toEqual([
      'tool_call',
      'tool_result',
      'progress',
      'tool_result',
      'tool_call',
      'tool_result',
      'tool_call',
      'tool_result',
      'text',
    ]);
    expect(entries[2]).toEqual({ kind: 'progress', note: 'wrote hello.txt', percent: 50 });
    expect(entries[5]).toMatchObject({
      error: true,
      output: expect.stringContaining('missing-file'),
    });
    // Its tool calls and their results are paired by id.
    expect(entries[1].id).toBe(entries[0].id);
    // The socket pushed the same entries, in as many messages as the agent took, and closed.
    expect(await socketClosed).toBe(1000);
    expect(pushedEntries()).toEqual(whole.entries);
    expect(pushed.at(-1)!.ended).toBe(true);
    expect(pushed.length).toBeGreaterThan(1);
    // Nothing more after the end.
    const after = (await api(gw.url, 'GET', `/runs/${run.id}/transcript?after=${whole.next}`)).body;
    expect(after).toEqual({ kind, entries: [], next: whole.next, ended: true });

    // The CLI without --follow prints the same; --raw the agent's own JSON lines.
    const readable = await runCli(['task', 'log', id, '--url', gw.url]);
    expect(readable.code).toBe(0);
    expect(readable.stdout).toBe(followed);
    const raw = await runCli(['task', 'log', id, '--raw', '--url', gw.url]);
    expect(raw.code).toBe(0);
    const lines = raw.stdout.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('{')).length).toBeGreaterThan(entries.length);
    expect(raw.stdout).not.toContain('→ ');
  });
});
