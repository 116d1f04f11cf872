// GET /runs/:runId/transcript/stream: a command run's lines pushed as it prints them, from an
// offset, closed once the run ended; a bad request refused before the upgrade.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { api, startGateway, type TestGateway } from '../helpers/app.js';
import { runCli, tempDir } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { getTask, settledIn } from '../helpers/workers.js';

interface Pushed {
  kind: string | null;
  entries: { kind: string; text: string }[];
  next: number;
  ended: boolean;
}

function follow(gw: TestGateway, runId: string, query = '') {
  const ws = new WebSocket(
    `${gw.url.replace('http', 'ws')}/runs/${runId}/transcript/stream${query}`,
  );
  const pushed: Pushed[] = [];
  ws.on('message', (data: Buffer) => pushed.push(JSON.parse(data.toString('utf8'))));
  const closed = new Promise<number>((resolve) => ws.on('close', resolve));
  const refused = new Promise<number>((resolve) =>
    ws.once('unexpected-response', (req, res) => {
      req.destroy();
      resolve(res.statusCode ?? 0);
    }),
  );
  ws.on('error', () => undefined);
  const lines = () => pushed.flatMap((p) => p.entries.map((e) => e.text));
  return { ws, pushed, closed, refused, lines };
}

describe('GET /runs/:runId/transcript/stream', () => {
  it('pushes a run’s lines as it prints them, from an offset, and closes once it ended', async () => {
    const gate = join(tempDir(), 'go');
    const gw = await startGateway(
      {
        workers: {
          tickSeconds: 0.1,
          defaultProfile: 'p',
          profiles: {
            p: {
              command: [
                '/bin/sh',
                '-c',
                `echo one; until [ -f '${gate}' ]; do sleep 0.05; done; echo two; until [ -f '${gate}2' ]; do sleep 0.05; done; echo three; printf 'x \\033]52;c;aGk=\\007 y\\n'; echo '{"status":"done"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
              ],
            },
          },
        },
      },
      { dispatch: true },
    );
    const { id } = (await api(gw.url, 'POST', '/tasks', { title: 'print' })).body;
    const runId = await waitFor('a run', async () => (await getTask(gw, id)).currentRunId);
    const first = follow(gw, runId);
    await waitFor('the first line', () => first.lines().includes('one'));
    expect(first.pushed[0]!.kind).toBeNull();
    // A second reader from where the first line ended gets only what comes after it.
    const second = follow(gw, runId, `?after=${first.pushed.at(-1)!.next}`);
    writeFileSync(gate, '');
    // Printed while nothing else happens to the run: the watch of its folder pushes it.
    await waitFor('the second line', () => first.lines().includes('two'));
    await waitFor('the second line, to the second reader', () => second.lines().includes('two'));
    expect(first.pushed.some((p) => p.ended)).toBe(false);
    writeFileSync(`${gate}2`, '');
    expect(await first.closed).toBe(1000);
    expect(await second.closed).toBe(1000);
    expect(first.lines()).toEqual(['one', 'two', 'three', 'x \u001b]52;c;aGk=\u0007 y']);
    expect(second.lines()).toEqual(['two', 'three', 'x \u001b]52;c;aGk=\u0007 y']);
    expect(first.pushed.at(-1)!.ended).toBe(true);
    await settledIn(gw, id, 'done');
    // A run that has ended: what it printed at once, then closed.
    const late = follow(gw, runId);
    expect(await late.closed).toBe(1000);
    expect(late.lines()).toEqual(first.lines());
    // On a terminal, what the run printed cannot drive it: its escape sequence is shown.
    const printed = await runCli(['task', 'log', id, '--url', gw.url]);
    expect(printed.stdout).toBe('one\ntwo\nthree\nx \\u{1b}]52;c;aGk=\\u{7} y\n');
    // A bad offset for a run that exists: refused before the upgrade.
    expect(await follow(gw, runId, '?after=-1').refused).toBe(400);
  });

  it('refuses an unknown run before the upgrade', async () => {
    const gw = await startGateway();
    expect(await follow(gw, 'r_000000000000').refused).toBe(404);
    expect(await follow(gw, 'nonsense').refused).toBe(404);
  });
});
