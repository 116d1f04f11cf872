// A forge's webhook delivery: its signature checked as that forge signs (GitHub and Gitea an
// HMAC-SHA256 of the raw body, GitLab a shared token), its id for deduplication, and which pull
// requests it may concern. Its payload only says what to sync: the forge's API is the truth.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ForgeProvider } from '../config/schema.js';

export interface Delivery {
  /** The forge's id of the delivery, the same on every retry of it. */
  id: string;
  event: string;
  /** What in the payload may name a pull request: numbers, head commits, branches. */
  numbers: number[];
  shas: string[];
  branches: string[];
}

type Headers = Record<string, string | string[] | undefined>;

const header = (headers: Headers, name: string): string | null => {
  const value = headers[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? (value[0] ?? null) : null;
};

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The signature is the forge's: an HMAC of the raw body (GitHub, Gitea), the token (GitLab). */
function signed(provider: ForgeProvider, headers: Headers, raw: Buffer, secret: string): boolean {
  if (provider === 'gitlab') {
    const token = header(headers, 'x-gitlab-token');
    return token !== null && sameBytes(Buffer.from(token), Buffer.from(secret));
  }
  const mac = createHmac('sha256', secret).update(raw).digest();
  const hub = header(headers, 'x-hub-signature-256');
  if (hub !== null && /^sha256=[0-9a-f]{64}$/i.test(hub))
    return sameBytes(Buffer.from(hub.slice(7), 'hex'), mac);
  const gitea = provider === 'gitea' ? header(headers, 'x-gitea-signature') : null;
  return (
    gitea !== null && /^[0-9a-f]{64}$/i.test(gitea) && sameBytes(Buffer.from(gitea, 'hex'), mac)
  );
}

/** The delivery, or why it is refused (a missing or wrong signature, no id). */
export function readDelivery(
  provider: ForgeProvider,
  headers: Headers,
  raw: Buffer,
  secret: string,
): Delivery | { refused: string } {
  if (!signed(provider, headers, raw, secret))
    return { refused: "the delivery is not signed with this repository's webhook secret" };
  const id =
    provider === 'github'
      ? header(headers, 'x-github-delivery')
      : provider === 'gitea'
        ? (header(headers, 'x-gitea-delivery') ?? header(headers, 'x-github-delivery'))
        : (header(headers, 'idempotency-key') ?? header(headers, 'x-gitlab-event-uuid'));
  if (!id || id.length > 200) return { refused: 'the delivery has no id' };
  const event =
    header(headers, 'x-github-event') ??
    header(headers, 'x-gitea-event') ??
    header(headers, 'x-gitlab-event') ??
    'unknown';
  let payload: unknown = null;
  try {
    payload = JSON.parse(raw.toString('utf8'));
  } catch {
    // Signed but not JSON: nothing in it names a pull request; a sync of every one still runs.
  }
  return { id, event, ...hints(payload) };
}

/** Numbers, commits and branches the payload mentions where forges put them. */
function hints(payload: unknown): Pick<Delivery, 'numbers' | 'shas' | 'branches'> {
  const numbers = new Set<number>();
  const shas = new Set<string>();
  const branches = new Set<string>();
  const o = (v: unknown): Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const num = (v: unknown) => {
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) numbers.add(v);
  };
  const str = (set: Set<string>, v: unknown) => {
    if (typeof v === 'string' && v.length > 0 && v.length < 256) set.add(v);
  };
  const p = o(payload);
  const pr = o(p.pull_request);
  num(pr.number);
  if (Object.keys(pr).length > 0) num(p.number);
  str(branches, o(pr.head).ref);
  str(shas, o(pr.head).sha);
  const issue = o(p.issue);
  if (issue.pull_request !== undefined) num(issue.number);
  for (const key of ['check_run', 'check_suite']) {
    const check = o(p[key]);
    str(shas, check.head_sha);
    str(branches, check.head_branch);
    for (const linked of Array.isArray(check.pull_requests) ? check.pull_requests : [])
      num(o(linked).number);
  }
  if (typeof p.sha === 'string') str(shas, p.sha);
  // GitLab: a merge request hook, a note on one, a pipeline of one.
  const attributes = o(p.object_attributes);
  if (p.object_kind === 'merge_request') {
    num(attributes.iid);
    str(branches, attributes.source_branch);
  }
  if (p.object_kind === 'pipeline') {
    str(shas, attributes.sha);
    str(branches, attributes.ref);
  }
  num(o(p.merge_request).iid);
  str(branches, o(p.merge_request).source_branch);
  return { numbers: [...numbers], shas: [...shas], branches: [...branches] };
}
