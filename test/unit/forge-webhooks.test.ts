// Forges' webhook deliveries (src/forges/webhooks.ts): signatures as each forge signs, ids, and
// what a payload may name; pure.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readDelivery } from '../../src/forges/webhooks.js';

const secret = 'shh';
const body = Buffer.from(
  JSON.stringify({
    action: 'opened',
    number: 7,
    pull_request: { number: 7, head: { ref: 'gatehouse/t_1', sha: 'abc' } },
  }),
);
const hmac = (raw: Buffer, key = secret) => createHmac('sha256', key).update(raw).digest('hex');

describe('webhook deliveries', () => {
  it('reads a GitHub delivery signed with X-Hub-Signature-256, and what it names', () => {
    const d = readDelivery(
      'github',
      {
        'x-hub-signature-256': `sha256=${hmac(body)}`,
        'x-github-delivery': 'd1',
        'x-github-event': 'pull_request',
      },
      body,
      secret,
    );
    expect(d).toEqual({
      id: 'd1',
      event: 'pull_request',
      numbers: [7],
      shas: ['abc'],
      branches: ['gatehouse/t_1'],
    });
  });

  it('refuses a wrong, missing, or malformed signature, and one over other bytes', () => {
    const headers = { 'x-github-delivery': 'd1' };
    expect(readDelivery('github', headers, body, secret)).toHaveProperty('refused');
    expect(
      readDelivery(
        'github',
        { ...headers, 'x-hub-signature-256': `sha256=${hmac(body, 'other')}` },
        body,
        secret,
      ),
    ).toHaveProperty('refused');
    expect(
      readDelivery('github', { ...headers, 'x-hub-signature-256': 'sha256=zz' }, body, secret),
    ).toHaveProperty('refused');
    expect(
      readDelivery(
        'github',
        { ...headers, 'x-hub-signature-256': `sha256=${hmac(body)}` },
        Buffer.concat([body, Buffer.from(' ')]),
        secret,
      ),
    ).toHaveProperty('refused');
  });

  it("takes Gitea's X-Gitea-Signature and GitLab's token, ids from their own headers", () => {
    expect(
      readDelivery(
        'gitea',
        {
          'x-gitea-signature': hmac(body),
          'x-gitea-delivery': 'g1',
          'x-gitea-event': 'pull_request',
        },
        body,
        secret,
      ),
    ).toMatchObject({ id: 'g1', numbers: [7] });
    const mr = Buffer.from(
      JSON.stringify({
        object_kind: 'merge_request',
        object_attributes: { iid: 4, source_branch: 'b' },
      }),
    );
    expect(
      readDelivery(
        'gitlab',
        {
          'x-gitlab-token': secret,
          'idempotency-key': 'k1',
          'x-gitlab-event': 'Merge Request Hook',
        },
        mr,
        secret,
      ),
    ).toEqual({ id: 'k1', event: 'Merge Request Hook', numbers: [4], shas: [], branches: ['b'] });
    expect(
      readDelivery('gitlab', { 'x-gitlab-token': 'guess', 'idempotency-key': 'k1' }, mr, secret),
    ).toHaveProperty('refused');
    // A GitLab hook without an Idempotency-Key (older GitLab): its event UUID.
    expect(
      readDelivery('gitlab', { 'x-gitlab-token': secret, 'x-gitlab-event-uuid': 'u1' }, mr, secret),
    ).toMatchObject({ id: 'u1' });
  });

  it('names nothing from a signed body that is not JSON, or a comment on an issue', () => {
    const raw = Buffer.from('not json');
    expect(
      readDelivery(
        'github',
        { 'x-hub-signature-256': `sha256=${hmac(raw)}`, 'x-github-delivery': 'd2' },
        raw,
        secret,
      ),
    ).toMatchObject({ numbers: [], shas: [], branches: [] });
    const issue = Buffer.from(JSON.stringify({ issue: { number: 9 }, comment: { body: 'x' } }));
    expect(
      readDelivery(
        'github',
        { 'x-hub-signature-256': `sha256=${hmac(issue)}`, 'x-github-delivery': 'd3' },
        issue,
        secret,
      ),
    ).toMatchObject({ numbers: [] });
  });
});
