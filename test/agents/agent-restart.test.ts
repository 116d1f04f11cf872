// A daemon killed with SIGKILL while an agent runs (docs/agents.md): the agent goes on, its output kept
// in agent.jsonl by its wrapper; the next instance adopts it and judges it from that file, as it
// would have. Both engines, a real daemon, the real claude.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { ENDS_AGENTS, claudeProfile, shellCall } from '../helpers/agents.js';
import { daemonAuth, startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/git.js';
import { anthropicDouble } from '../helpers/model-doubles.js';
import { ENGINE, storeConfig } from '../helpers/store.js';
import { waitFor } from '../helpers/wait.js';

describe('an agent run across a daemon killed with SIGKILL', () => {
  it('is adopted and judged from agent.jsonl by the next instance', async () => {
    const double = await anthropicDouble();
    const marks = tempDir();
    const started = join(marks, 'tool-started');
    const go = join(marks, 'go');
    // Its tool waits until the test lets it go: the daemon is killed meanwhile.
    double.script = (_r, turn) =>
      turn === 0
        ? shellCall('claude', `touch ${started}; while [ ! -e ${go} ]; do sleep 0.1; done`)
        : { text: 'finished across the restart' };
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      store: storeConfig(ENGINE, dataDir),
      ...ENDS_AGENTS,
      workers: {
        tickSeconds: 0.1,
        killGraceSeconds: 0.5,
        defaultProfile: 'agent',
        profiles: {
          agent: claudeProfile(
            double,
            {},
            // The marks are the test's, written from inside the sandbox.
            { workspace: 'worktree', repo: 'app', sandbox: { kind: 'bwrap', writable: [marks] } },
          ),
        },
      },
      workspaces: { repos: { app: { path: makeRepo() } }, minFreeBytes: 0 },
    });
    const daemon = startDaemon({ dataDir, config });
    const url = await waitServing(dataDir, daemon.pid);
    // A sandboxed profile and no api.token: the daemon made its own, kept in its data dir.
    const auth = daemonAuth(dataDir);
    expect(auth.authorization).toMatch(/^Bearer [0-9a-f]{64}$/);
    expect((await api(url, 'GET', '/tasks')).status).toBe(401);
    const { id } = (await api(url, 'POST', '/tasks', { title: 'outlive the daemon' }, auth)).body;
    await waitFor('the tool to run', async () => existsSync(started) || null, 60_000);
    daemon.child.kill('SIGKILL');
    await daemon.exited;

    const again = startDaemon({ dataDir, config });
    const url2 = await waitServing(dataDir, again.pid);
    const adopted = await waitFor('the run adopted', async () => {
      const events = (await api(url2, 'GET', `/tasks/${id}/events`, undefined, auth)).body.events;
      return events.some((e: { kind: string }) => e.kind === 'adopted') || null;
    });
    expect(adopted).toBe(true);
    writeFileSync(go, '');
    const task = await waitFor(
      'the task done',
      async () => {
        const t = (await api(url2, 'GET', `/tasks/${id}`, undefined, auth)).body;
        return t.status === 'done' && t.runs[0].endedAt !== null ? t : null;
      },
      60_000,
    );
    expect(task.runs).toHaveLength(1);
    expect(task.summary).toBe('finished across the restart');
    expect(task.runs[0].agent.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(task.runs[0].agent.usage.outputTokens).toBeGreaterThan(0);
    const lines = readFileSync(join(dataDir, 'runs', task.runs[0].id, 'agent.jsonl'), 'utf8');
    expect(lines).toContain('"type":"result"');
    again.child.kill('SIGTERM');
    await again.exited;
  });
});
