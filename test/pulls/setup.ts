// A daemon whose repository has a pull-request forge played by a double, and the command worker
// its tasks run: it writes a file in its worktree (and, told to, what its instructions say).
import { api, startGateway, type TestGateway } from '../helpers/app.js';
import { ForgeModel } from '../helpers/forges/model.js';
import { createTask, getTask } from '../helpers/workers.js';
import { waitFor } from '../helpers/wait.js';

export const TOKEN_ENV = 'FORGE_TOKEN_FOR_TESTS';
export const HOOK_ENV = 'FORGE_HOOK_SECRET_FOR_TESTS';
export const HOOK_SECRET = 'a-webhook-secret-of-some-length';

/**
 * Without instructions: writes change.txt (left uncommitted, for gatehouse to commit) and
 * completes through result.json. With them: appends them to feedback.txt and completes. With
 * NO_CHANGE it changes nothing; with HOLD, it waits while that file exists. It also writes what
 * it can see of the forge token.
 */
export const WORKER = {
  command: [
    '/bin/sh',
    '-c',
    `printf '%s' "\${${TOKEN_ENV}:-unset}" > "$GATEHOUSE_RUN_DIR/token-seen"
while [ -n "$HOLD" ] && [ -e "$HOLD" ]; do sleep 0.05; done
if [ -n "$NO_CHANGE" ]; then :
elif [ -n "$GATEHOUSE_INSTRUCTIONS_FILE" ]; then cat "$GATEHOUSE_INSTRUCTIONS_FILE" >> feedback.txt
else echo "the task's change" > change.txt; fi
printf '{"status":"done","summary":"made the change"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
  ],
  workspace: 'worktree',
  repo: 'app',
};

export interface PrSetup {
  gw: TestGateway;
  checkout: string;
}

export async function prGateway(
  model: ForgeModel,
  checkout: string,
  api: string,
  token: string,
  opts: { provider?: string; pr?: object; env?: Record<string, string>; project?: string } = {},
): Promise<TestGateway> {
  return startGateway(
    {
      workers: {
        tickSeconds: 0.1,
        killGraceSeconds: 0.3,
        defaultProfile: 'dev',
        profiles: { dev: { ...WORKER, env: opts.env ?? {} } },
      },
      workspaces: {
        minFreeBytes: 0,
        repos: {
          app: {
            path: checkout,
            base: 'main',
            pr: {
              provider: opts.provider ?? 'github',
              api,
              project: opts.project ?? model.project,
              tokenEnv: TOKEN_ENV,
              webhookSecretEnv: HOOK_ENV,
              pollSeconds: 1,
              noChecksSeconds: 2,
              feedback: { debounceSeconds: 0.5 },
              ...opts.pr,
            },
          },
        },
      },
    },
    { dispatch: true, env: { [TOKEN_ENV]: token, [HOOK_ENV]: HOOK_SECRET } },
  );
}

/** Creates a task and waits until it has a pull request; the task. */
export async function taskWithPr(gw: TestGateway, title = 'add a change'): Promise<any> {
  const { id } = await createTask(gw, { title });
  return waitFor('the task in review with its pull request', async () => {
    const t = await getTask(gw, id);
    return t.status === 'review' && t.pr !== null ? t : null;
  });
}

export async function syncNow(gw: TestGateway, id: string): Promise<any> {
  const res = await api(gw.url, 'POST', `/tasks/${id}/pr/sync`);
  if (res.status !== 200) throw new Error(`sync failed: ${JSON.stringify(res.body)}`);
  return res.body;
}
