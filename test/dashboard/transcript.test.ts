// The task panel's transcript in a real browser, on what each real CLI printed (transcripts
// recorded from claude 2.1.332 and codex 0.171.0, replayed by a stand-in for the CLI that stops
// after the failed command until the test lets it go on): shown as the agent works, a tool's
// output opened with a click and still open as more comes.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { ROOT, startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { launchChromium } from '../helpers/browser.js';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** A stand-in for the CLI: prints the recording up to its failed command, then the rest once let go. */
function replayer(dir: string, kind: 'claude' | 'codex') {
  const fixture = join(ROOT, 'test/fixtures/transcripts', `${kind}-tool.jsonl`);
  const lines = readFileSync(fixture, 'utf8').trimEnd().split('\n');
  const split = lines.findLastIndex((l) => l.includes('missing-file')) + 1;
  const gate = join(dir, 'go');
  const bin = join(dir, kind);
  writeFileSync(
    bin,
    [
      '#!/bin/sh',
      'cat > /dev/null',
      `head -n ${split} '${fixture}'`,
      `until [ -f '${gate}' ]; do sleep 0.1; done`,
      `tail -n +${split + 1} '${fixture}'`,
      '',
    ].join('\n'),
  );
  chmodSync(bin, 0o755);
  return { bin, gate };
}

describe.each(['claude', 'codex'] as const)(
  'the transcript of a %s run, in a real browser',
  (kind) => {
    it('shows each call, its output on a click, the progress and the answer, as they come', async () => {
      const dataDir = tempDir();
      const { bin, gate } = replayer(tempDir(), kind);
      const daemon = startDaemon({
        dataDir,
        config: writeConfig(tempDir(), {
          // A test that fails before it lets the stand-in go on leaves no worker behind.
          shutdown: { workers: 'terminate' },
          workers: {
            tickSeconds: 0.1,
            defaultProfile: 'agent',
            // The stand-in reads the recording from this checkout: no sandbox.
            profiles: { agent: { agent: { kind, bin }, sandbox: { kind: 'none' } } },
          },
        }),
      });
      const url = await waitServing(dataDir, daemon.pid);
      const { id } = (await api(url, 'POST', '/tasks', { title: 'write hello' })).body;
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${url}/#/tasks/${id}`);
      const transcript = page.locator('#transcript');
      // While the agent waits: its first command, its output, its progress, the failed command.
      await transcript.getByText('ls && echo hello > hello.txt').waitFor({ timeout: 15_000 });
      await transcript.getByText('progress: 50% · wrote hello.txt').waitFor();
      const failed = transcript.locator('details.t-failed');
      await failed.waitFor();
      expect(await failed.locator('summary').textContent()).toMatch(/^failed: /);
      const message = failed.locator('pre', {
        hasText: 'cat: missing-file: No such file or directory',
      });
      expect(await message.isVisible()).toBe(false);
      await failed.locator('summary').click();
      await message.waitFor();
      expect(await transcript.getByText('Done: hello.txt is written.').count()).toBe(0);
      expect((await api(url, 'GET', `/tasks/${id}`)).body.status).toBe('running');

      writeFileSync(gate, '');
      await transcript.getByText('Done: hello.txt is written.').waitFor({ timeout: 15_000 });
      // The output opened before is still open: what came was added, not redrawn.
      expect(await message.isVisible()).toBe(true);
      expect(await transcript.locator('.t-call').count()).toBe(2);
      await page.locator('#detail[data-status="done"]').waitFor({ timeout: 15_000 });
      await context.close();
    });
  },
);
