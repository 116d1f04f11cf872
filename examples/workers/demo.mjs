#!/usr/bin/env node
// The demo worker (default profile): reads its task, works for a moment with heartbeats, then
// completes through the API with its run token. A template for real workers.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const { GATEHOUSE_URL, GATEHOUSE_TASK_ID, GATEHOUSE_RUN_TOKEN, GATEHOUSE_TASK_FILE } = process.env;
const task = JSON.parse(readFileSync(GATEHOUSE_TASK_FILE, 'utf8'));

async function call(action, body) {
  const res = await fetch(`${GATEHOUSE_URL}/tasks/${GATEHOUSE_TASK_ID}/${action}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEHOUSE_RUN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${action} refused: ${res.status} ${await res.text()}`);
}

console.log(`demo worker: working on "${task.title}"`);
for (let step = 1; step <= 3; step++) {
  await sleep(300);
  console.log(`step ${step}/3`);
  await call('heartbeat', { note: `step ${step}/3` });
}
await call('complete', { summary: `demo worker finished "${task.title}" in 3 steps` });
console.log('done');
