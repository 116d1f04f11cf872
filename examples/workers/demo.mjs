#!/usr/bin/env node
// The demo worker (default profile): reads its task, works for a moment with heartbeats, then
// completes through the API with its run token. A template for real workers: a call that cannot
// reach the daemon (it is restarting) is retried with backoff, and a verdict that still cannot
// be delivered is left in result.json, which the daemon reads when the worker exits 0.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const {
  GATEHOUSE_URL,
  GATEHOUSE_TASK_ID,
  GATEHOUSE_RUN_TOKEN,
  GATEHOUSE_TASK_FILE,
  GATEHOUSE_RUN_DIR,
} = process.env;
const task = JSON.parse(readFileSync(GATEHOUSE_TASK_FILE, 'utf8'));

/** POSTs until the daemon answers or `waitMs` pass; false if it never could. Refusals throw. */
async function call(action, body, waitMs) {
  const deadline = Date.now() + waitMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      const res = await fetch(`${GATEHOUSE_URL}/tasks/${GATEHOUSE_TASK_ID}/${action}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${GATEHOUSE_RUN_TOKEN}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      });
      if (res.ok) return true;
      if (res.status < 500) throw new Error(`${action} refused: ${res.status} ${await res.text()}`);
    } catch (err) {
      if (err.message.includes('refused:')) throw err;
    }
    if (Date.now() + delay > deadline) return false;
    await sleep(delay);
  }
}

console.log(`demo worker: working on "${task.title}"`);
for (let step = 1; step <= 3; step++) {
  await sleep(300);
  console.log(`step ${step}/3`);
  await call('heartbeat', { note: `step ${step}/3` }, 5_000);
}
const summary = `demo worker finished "${task.title}" in 3 steps`;
if (!(await call('complete', { summary }, 600_000))) {
  const path = join(GATEHOUSE_RUN_DIR, 'result.json');
  writeFileSync(`${path}.tmp`, JSON.stringify({ status: 'done', summary }));
  renameSync(`${path}.tmp`, path);
  console.log('gatehouse unreachable: verdict left in result.json');
}
console.log('done');
