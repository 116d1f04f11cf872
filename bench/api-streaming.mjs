// The board's API while agents work: POST /tasks and GET /tasks/:id with 50 agent runs printing
// their stream (claude's stream-json, 20 lines a second each, a usage line each second, read by
// the daemon each tick for liveness and budgets), beside the bare Fastify + better-sqlite3 server
// loaded in turn on the same machine while those agents still run.
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { interleaved, startChild, startGatehouse } from './api.mjs';
import { printTable, removeDir, stopAll, tempDir, waitFor } from './lib.mjs';

const AGENTS = 50;
const LINES_PER_SECOND = 20;

/** An agent that reads its prompt and then streams as claude does, until it is ended. */
function streamer(dir) {
  const path = join(dir, 'claude-stream');
  const delta = JSON.stringify({
    type: 'stream_event',
    event: { type: 'content_block_delta', delta: { type: 'text_delta', text: 'tok ' } },
    session_id: 's-bench',
  });
  const turn = JSON.stringify({
    type: 'assistant',
    session_id: 's-bench',
    message: {
      role: 'assistant',
      content: [{ type: 'text', text: 'x'.repeat(200) }],
      usage: { input_tokens: 100, output_tokens: 20 },
    },
  });
  const init = JSON.stringify({ type: 'system', subtype: 'init', session_id: 's-bench' });
  // perl: no fork a line (a sleep(1) a line would load the machine more than the daemon).
  writeFileSync(
    path,
    `#!/usr/bin/perl
$| = 1; my @prompt = <STDIN>;
print '${init}', "\\n";
for (my $i = 1; ; $i++) {
  print '${delta}', "\\n";
  print '${turn}', "\\n" if $i % ${LINES_PER_SECOND} == 0;
  select(undef, undef, undef, ${1 / LINES_PER_SECOND});
}
`,
  );
  chmodSync(path, 0o755);
  return path;
}

/** The bytes the agents' runs printed so far (their agent.jsonl files). */
function printed(dataDir, runIds) {
  let bytes = 0;
  for (const id of runIds) {
    try {
      bytes += statSync(join(dataDir, 'runs', id, 'agent.jsonl')).size;
    } catch {
      // not yet
    }
  }
  return bytes;
}

export async function run() {
  const dirs = [tempDir(), tempDir(), tempDir()];
  try {
    const bin = streamer(dirs[0]);
    const gh = await startGatehouse(dirs[0], {
      maxConcurrent: AGENTS,
      tickSeconds: 1,
      defaultProfile: 'agent',
      profiles: { agent: { agent: { kind: 'claude', bin }, maxConcurrent: AGENTS } },
    });
    // A sandboxed agent reaches the loopback: the API has a token, the daemon's own.
    const auth = {
      authorization: `Bearer ${readFileSync(join(dirs[0], 'api-token'), 'utf8').trim()}`,
    };
    const post = (body) =>
      fetch(`${gh.url}/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify(body),
      });
    for (let i = 0; i < AGENTS; i++) await post({ title: `agent ${i}` });
    const runIds = await waitFor(
      `${AGENTS} agents running`,
      async () => {
        const tasks = (
          await (await fetch(`${gh.url}/tasks?status=running&limit=100`, { headers: auth })).json()
        ).tasks;
        return tasks.length === AGENTS ? tasks.map((t) => t.currentRunId) : null;
      },
      60_000,
      100,
    );
    // The load's tasks go to the same profile, whose slots are all taken: they wait in ready.
    const bare = await startChild('bench/bare-server.mjs', [join(dirs[1], 'bare.db'), '0', 'FULL']);
    const before = printed(dirs[0], runIds);
    const t0 = performance.now();
    // The same daemon with no agent running (and the same token): what the streaming costs.
    const token = auth.authorization.slice('Bearer '.length);
    const idle = await startGatehouse(dirs[2], { maxConcurrent: 0 }, undefined, {
      api: { token },
    });
    const loads = await interleaved(
      { gh: gh.url, idle: idle.url, bare: bare.url },
      { gh: auth, idle: auth },
    );
    const seconds = (performance.now() - t0) / 1000;
    const lineRate = (printed(dirs[0], runIds) - before) / seconds;
    const stillRunning = (
      await (await fetch(`${gh.url}/tasks?status=running&limit=100`, { headers: auth })).json()
    ).tasks.length;
    gh.proc.kill('SIGTERM');
    await gh.proc.exited;
    bare.proc.kill('SIGTERM');
    idle.proc.kill('SIGTERM');
    const avg = (results) => results.reduce((s, r) => s + r.requests.average, 0) / results.length;
    const streamed = `${AGENTS} agents streaming (${(lineRate / 1024).toFixed(0)} KiB/s printed; ${stillRunning} still running at the end)`;
    return printTable('Board API while agents stream', [
      {
        figure: `POST /tasks, ${streamed}`,
        unit: 'req/s',
        value: avg(loads.gh.post),
        baselineName: 'bare fastify+sqlite insert (synchronous=FULL), same machine, same agents',
        baseline: avg(loads.bare.post),
        goal: '>= 0.5x',
      },
      {
        figure: `GET /tasks/:id, ${streamed}`,
        unit: 'req/s',
        value: avg(loads.gh.get),
        baselineName: 'bare fastify+sqlite select, same machine, same agents',
        baseline: avg(loads.bare.get),
        goal: '>= 0.5x',
      },
      {
        figure: `POST /tasks, ${streamed}`,
        unit: 'req/s',
        value: avg(loads.gh.post),
        baselineName: 'the same daemon with no agent, same machine, same agents',
        baseline: avg(loads.idle.post),
      },
      {
        figure: `GET /tasks/:id, ${streamed}`,
        unit: 'req/s',
        value: avg(loads.gh.get),
        baselineName: 'the same daemon with no agent, same machine, same agents',
        baseline: avg(loads.idle.get),
      },
    ]);
  } finally {
    stopAll();
    for (const dir of dirs) removeDir(dir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
