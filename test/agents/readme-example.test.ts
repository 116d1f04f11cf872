// The README's first profile, as written: a claude agent in a worktree of its own, sandboxed as
// every agent is, its work ending in a pull request. Only what cannot be the README's is
// changed: the repository's path, the forge's address and project (a double of GitHub's API,
// its token in the daemon's environment), and the environment that points claude at the
// provider's double (claude itself is found on PATH, as a user's would be).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/app.js';
import { ENDS_AGENTS, claudeBin, claudeProfile } from '../helpers/agents.js';
import { ROOT } from '../helpers/daemon.js';
import { gitOut } from '../helpers/git.js';
import { githubDouble } from '../helpers/forges/github.js';
import { ForgeModel } from '../helpers/forges/model.js';
import { waitFor } from '../helpers/wait.js';
import { anthropicDouble } from '../helpers/model-doubles.js';
import { createTask, getTask } from '../helpers/workers.js';

function readmeConfig(): any {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'));
  const block = /```json\n([\s\S]*?)\n```/.exec(section);
  if (!block) throw new Error('no JSON block under "## Configuration" in the README');
  return JSON.parse(block[1]!);
}

describe("the README's agent profile", () => {
  it('runs a task as written, with claude on PATH', async () => {
    const config = readmeConfig();
    const [name, profile] = Object.entries<any>(config.workers.profiles)[0]!;
    expect(profile.agent.kind).toBe('claude');
    expect(profile.agent.bin).toBeUndefined();
    const double = await anthropicDouble();
    double.script = (_r, turn) =>
      turn === 0
        ? { tool: 'Write', input: { file_path: 'README.md', content: '# app, by claude\n' } }
        : { text: 'Wrote the README.' };
    const { model, checkout } = ForgeModel.withRepository();
    const forge = await githubDouble(model);
    config.workspaces.repos.app.path = checkout;
    config.workspaces.repos.app.pr.api = forge.url;
    config.workspaces.repos.app.pr.project = model.project;
    profile.env = {
      ...claudeProfile(double).env,
      PATH: `${dirname(claudeBin())}:${process.env.PATH}`,
    };
    const gw = await startGateway(
      { ...config, ...ENDS_AGENTS, workers: { ...config.workers, tickSeconds: 0.1 } },
      { dispatch: true, env: { GITHUB_TOKEN: forge.token } },
    );
    try {
      expect(gw.config.workers.profiles[name]!.sandbox.kind).toBe('bwrap');
      const { id } = await createTask(gw, { title: 'write a README' });
      const done = await waitFor(
        'the task in review with its PR',
        async () => {
          const t = await getTask(gw, id);
          return t.status === 'review' && t.pr ? t : null;
        },
        60_000,
      );
      expect(done.runs[0].profile).toBe(name);
      expect(done.summary).toBe('Wrote the README.');
      expect(readFileSync(join(done.workspace.path, 'README.md'), 'utf8')).toBe(
        '# app, by claude\n',
      );
      expect(existsSync(join(gw.dataDir, 'runs', done.runs[0].id, 'sandbox.args'))).toBe(true);
      expect(model.prs).toHaveLength(1);
      expect(gitOut(model.bare, 'show', `${done.pr.headSha}:README.md`)).toBe('# app, by claude');
    } finally {
      await forge.close();
    }
  });
});
