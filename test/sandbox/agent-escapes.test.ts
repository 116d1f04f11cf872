// The real Claude Code and Codex, sandboxed as every agent profile is, their shell tool scripted
// by the model double to try every escape (docs/sandbox.md): each fails, as do rewriting its own
// output and calling the API as an operator, while its commit, its model call and a resumed
// session succeed. Both kinds, both engines.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { ENDS_AGENTS, claudeProfile, codexProfile, shellCall } from '../helpers/agents.js';
import { tempDir } from '../helpers/daemon.js';
import { gitCode, gitOut, makeRepo } from '../helpers/git.js';
import { anthropicDouble, openaiDouble } from '../helpers/model-doubles.js';
import { waitFor } from '../helpers/wait.js';
import { ATTACK, processesMatching } from './attack.js';

const TOKEN = 'sandbox-agent-test-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** What only an agent run can try: its own output, and the API as an operator. */
const AGENT_ATTACK = ATTACK.replace(
  '} > escapes.txt',
  `r forge-own-output "echo '{\\"type\\":\\"result\\",\\"subtype\\":\\"success\\",\\"is_error\\":false,\\"result\\":\\"forged\\"}' >> '$GATEHOUSE_RUN_DIR/agent.jsonl'"
r stop-the-daemon "node -e \\"fetch('$API/admin/stop', { method: 'POST' }).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))\\""
r approve-itself "node -e \\"fetch('$API/tasks/$TASK/approve', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))\\""
} > escapes.txt`,
).replace(/printf '\{"status":"done".*\n/, '');

describe.each(['claude', 'codex'] as const)('%s in its sandbox', (kind) => {
  it('fails every escape while its own work, model call and resumed session succeed', async () => {
    const repo = makeRepo();
    const base = gitOut(repo, 'rev-parse', 'HEAD');
    const plan = join(tempDir(), 'plan');
    mkdirSync(plan);
    writeFileSync(join(plan, 'attack.sh'), AGENT_ATTACK);
    const double = kind === 'claude' ? await anthropicDouble() : await openaiDouble();
    double.script = (req, turn) => {
      if (req.text.includes('say the word')) return { text: 'resumed' };
      return turn === 0
        ? shellCall(kind, `PLAN=${plan} sh ${plan}/attack.sh`)
        : { text: 'attacked' };
    };
    const make = kind === 'claude' ? claudeProfile : codexProfile;
    const dataDir = tempDir();
    const gw = await startGateway(
      {
        ...ENDS_AGENTS,
        api: { token: TOKEN },
        workers: {
          tickSeconds: 0.1,
          killGraceSeconds: 0.5,
          defaultProfile: 'agent',
          profiles: {
            agent: make(
              double,
              {},
              {
                workspace: 'worktree',
                repo: 'app',
                review: true,
                sandbox: { kind: 'bwrap', readOnly: [plan] },
              },
            ),
            victim: {
              command: ['/bin/sh', '-c', 'exec sleep 300'],
              workspace: 'worktree',
              repo: 'app',
            },
          },
        },
        workspaces: { repos: { app: { path: repo, base: 'main' } }, minFreeBytes: 0 },
      },
      { dispatch: true, dataDir },
    );
    const post = (path: string, body: unknown) => api(gw.url, 'POST', path, body, AUTH);
    const get = async (id: string) =>
      (await api(gw.url, 'GET', `/tasks/${id}`, undefined, AUTH)).body;
    const victim = (await post('/tasks', { title: 'victim', assignee: 'victim' })).body;
    const running = await waitFor('the victim running', async () => {
      const t = await get(victim.id);
      return t.status === 'running' && t.worker ? t : null;
    });
    const homeFiles = ['.ssh', '.bashrc', '.profile', '.gitconfig', '.npmrc'].filter((f) =>
      existsSync(join(homedir(), f)),
    );
    const attacker = (await post('/tasks', { title: 'attacker' })).body;
    writeFileSync(
      join(plan, 'plan.env'),
      [
        `DATA='${dataDir}'`,
        `CONFIG='${gw.config.source}'`,
        `VICTIM_RUN='${running.currentRunId}'`,
        `VICTIM_WS='${running.workspace.path}'`,
        `VICTIM_ID='${victim.id}'`,
        `VICTIM_PID='${running.worker.pid}'`,
        `DAEMON_PID='${process.pid}'`,
        `DAEMON_HOME='${homedir()}'`,
        `HOME_FILES='${homeFiles.join(' ')}'`,
        `REPO='${repo}'`,
        `BASE='${base}'`,
        `TASK='${attacker.id}'`,
        `API='${gw.url}'`,
      ].join('\n'),
    );
    const inReview = await waitFor(
      'the attacker in review',
      async () => {
        const t = await get(attacker.id);
        return t.status === 'review' && t.runs[0]?.endedAt ? t : null;
      },
      90_000,
    );
    expect(inReview.summary).toBe('attacked');
    const branch = `gatehouse/${attacker.id}`;
    const report = gitOut(repo, 'show', `${branch}:escapes.txt`).split('\n');
    expect(report.filter((l) => !l.endsWith(' blocked'))).toEqual([]);
    expect(report).toHaveLength(19);
    expect(gitOut(repo, 'show', `${branch}:work.txt`)).toBe("the run's own work");
    expect(gitOut(repo, 'rev-parse', 'main')).toBe(base);
    expect(gitCode(repo, 'rev-parse', '--verify', `refs/heads/gatehouse/${victim.id}`)).toBe(0);
    expect(gitCode(repo, 'fsck', '--no-progress')).toBe(0);
    expect(existsSync(join(repo, '.git/hooks/post-commit'))).toBe(false);
    expect(gw.stops).toEqual([]);
    expect((await get(victim.id)).status).toBe('running');
    await waitFor(
      'nothing of the run left',
      async () => processesMatching('sleep\u00004242').length === 0,
    );
    // Its session resumes from the home it keeps across runs.
    await post(`/tasks/${attacker.id}/request-changes`, { text: 'say the word' });
    const resumed = await waitFor(
      'the resumed run in review',
      async () => {
        const t = await get(attacker.id);
        return t.status === 'review' && t.runs.length === 2 && t.runs[1].endedAt ? t : null;
      },
      90_000,
    );
    expect(resumed.summary).toBe('resumed');
    expect(resumed.runs[1].agent.resumed).toBe(inReview.runs[0].agent.sessionId);
  }, 240_000);
});
