// A person between a task and its first run (docs/mcp.md): a gated task waits in todo until an
// allowed approver approves the revision they saw; an edit after that asks again; a chat user
// who made the task cannot approve it with notSelf. On both engines.
import { describe, expect, it } from 'vitest';
import { api, startGateway, type TestGateway } from '../helpers/app.js';
import { signedHeaders, webhookReceiver, webhookSecret } from '../helpers/doubles.js';
import {
  createTask,
  eventsOf,
  getTask,
  profile,
  settledIn,
  ticksPass,
} from '../helpers/workers.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = webhookSecret('an-approvals-webhook-secret');
const fast = { tickSeconds: 0.1, killGraceSeconds: 0.3, failureLimit: 2, maxConcurrent: 4 };

async function gateway(gated: object, extra: object = {}): Promise<TestGateway> {
  const receiver = await webhookReceiver(SECRET);
  return startGateway(
    {
      workers: {
        ...fast,
        defaultProfile: 'gated',
        profiles: {
          gated: { ...profile('complete'), approval: 'before_run', ...gated },
          open: profile('complete'),
        },
      },
      platforms: [
        { name: 'team', type: 'webhook', options: { url: receiver.url, secret: SECRET } },
      ],
      ...extra,
    },
    { dispatch: true },
  );
}

/** A chat message from `user` in channel `c`, as the team's signed webhook delivers it. */
async function say(gw: TestGateway, user: string, text: string): Promise<string | null> {
  const body = JSON.stringify({ channel: 'c', text, user });
  const res = await api(
    gw.url,
    'POST',
    '/platform/team/inbound',
    body,
    signedHeaders(SECRET, body),
  );
  expect(res.status).toBe(202);
  return res.body.taskId as string | null;
}

describe('approval before the first run', () => {
  it('keeps a gated task in todo, awaiting approval, until approved; then it runs', async () => {
    const gw = await gateway({});
    const { id } = await createTask(gw, { title: 'deploy the thing' });
    const created = await getTask(gw, id);
    expect(created).toMatchObject({
      status: 'todo',
      awaiting: 'approval',
      approval: { revision: 1, approvedRevision: null, by: null, at: null },
    });
    await ticksPass(gw, 5);
    expect((await getTask(gw, id)).runs).toEqual([]);
    // Another profile's tasks run meanwhile.
    const free = await createTask(gw, { title: 'free', assignee: 'open' });
    await settledIn(gw, free.id, 'done');
    const approved = await api(gw.url, 'POST', `/tasks/${id}/approve`, { by: 'ann' });
    expect(approved.status).toBe(200);
    expect(approved.body.approval).toMatchObject({ approvedRevision: 1, by: 'ann' });
    expect(approved.body.awaiting).toBeNull();
    const done = await settledIn(gw, id, 'done');
    expect(done.runs).toHaveLength(1);
    const kinds = (await eventsOf(gw, id)).map((e) => e.kind);
    expect(kinds.slice(0, 4)).toEqual(['created', 'approval_requested', 'approved', 'promoted']);
    const approvedEvent = (await eventsOf(gw, id)).find((e) => e.kind === 'approved');
    expect(approvedEvent?.payload).toEqual({ by: 'ann', revision: 1 });
    // Approving again is nothing to approve: 409, and nothing changes.
    expect((await api(gw.url, 'POST', `/tasks/${id}/approve`, {})).status).toBe(409);
  });

  it('asks again after an edit of what was approved, and refuses an approval of an older revision', async () => {
    // No slot: an approved task waits in ready, so the edit comes before its first run.
    const gw = await gateway({ maxConcurrent: 0 });
    const { id } = await createTask(gw, { title: 'first wording' });
    expect((await api(gw.url, 'POST', `/tasks/${id}/approve`, { revision: 1 })).body.status).toBe(
      'ready',
    );
    // A priority is not what was approved: still approved.
    await api(gw.url, 'PATCH', `/tasks/${id}`, { priority: 3 });
    expect((await getTask(gw, id)).status).toBe('ready');
    const edited = await api(gw.url, 'PATCH', `/tasks/${id}`, { body: 'rm -rf / as well' });
    expect(edited.status).toBe(200);
    const again = await getTask(gw, id);
    expect(again).toMatchObject({ status: 'todo', approval: { revision: 2, approvedRevision: 1 } });
    const invalidated = (await eventsOf(gw, id)).find((e) => e.kind === 'approval_invalidated');
    expect(invalidated?.payload).toEqual({ revision: 2, fields: ['body'] });
    const stale = await api(gw.url, 'POST', `/tasks/${id}/approve`, { revision: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body.error.message).toContain('edited since revision 1');
    expect((await getTask(gw, id)).status).toBe('todo');
    expect((await api(gw.url, 'POST', `/tasks/${id}/approve`, { revision: 2 })).body.status).toBe(
      'ready',
    );
  });

  it('gates a task that asks for it on a profile that does not', async () => {
    const gw = await gateway({});
    const { id } = await createTask(gw, {
      title: 'asks for a person',
      assignee: 'open',
      approval: 'before_run',
    });
    expect((await getTask(gw, id)).status).toBe('todo');
    const plain = await createTask(gw, { title: 'does not', assignee: 'open' });
    await settledIn(gw, plain.id, 'done');
    expect((await getTask(gw, id)).runs).toEqual([]);
    await api(gw.url, 'POST', `/tasks/${id}/approve`, {});
    await settledIn(gw, id, 'done');
  });

  it('takes approvals only from the profile’s approvers, and never from the task’s own maker with notSelf', async () => {
    const gw = await gateway({ approvers: ['team:alice', 'team:bob'], notSelf: true });
    const id = await say(gw, 'alice', '/task ship it');
    expect(id).toMatch(/^t_/);
    expect(await getTask(gw, id!)).toMatchObject({
      status: 'todo',
      origin: { kind: 'platform', platform: 'team', channel: 'c', user: 'alice' },
    });
    // The API is not among the approvers: 403, nothing changes.
    const byApi = await api(gw.url, 'POST', `/tasks/${id}/approve`, {});
    expect(byApi.status).toBe(403);
    expect(byApi.body.error.message).toContain('api is not among the approvers');
    // Its maker may not (notSelf), nor anyone unlisted.
    await say(gw, 'alice', `/approve ${id}`);
    await say(gw, 'mallory', `/approve ${id}`);
    await ticksPass(gw, 3);
    expect((await getTask(gw, id!)).status).toBe('todo');
    expect((await eventsOf(gw, id!)).some((e) => e.kind === 'approved')).toBe(false);
    await say(gw, 'bob', `/approve ${id}`);
    const done = await settledIn(gw, id!, 'done');
    expect(done.approval).toMatchObject({ by: 'team:bob', approvedRevision: 1 });
  });

  it('tells the chat that made a gated task that it needs approval', async () => {
    const receiver = await webhookReceiver(SECRET);
    const gw = await startGateway(
      {
        workers: {
          ...fast,
          defaultProfile: 'gated',
          profiles: { gated: { ...profile('complete'), approval: 'before_run' } },
        },
        platforms: [
          { name: 'team', type: 'webhook', options: { url: receiver.url, secret: SECRET } },
        ],
      },
      { dispatch: true },
    );
    const id = await say(gw, 'carol', '/task needs a yes');
    await waitFor('the chat to hear it needs approval', () =>
      receiver.received.find(
        (m) => m.text.includes(`Task ${id}`) && m.text.includes('needs approval'),
      ),
    );
    const reply = receiver.received.find((m) => m.text.startsWith(`Created ${id}`));
    expect(reply?.text).toContain(`needs approval before it runs (/approve ${id})`);
  });
});
