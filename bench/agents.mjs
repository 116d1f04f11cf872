// Agents (docs/agents.md): the daemon's CPU per agent run (reading what it prints, its verdict) beside
// the same run as a plain command printing the same lines to its log; a 10,000-line agent.jsonl
// judged as after a restart, beside JSON.parse of every line; and how soon after a rate limit's
// reset the held profile's next run starts, beside the dispatcher's tick. The agent is a script
// that prints a recorded claude transcript, so the figures are the daemon's, not a model's.
import { chmodSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { judgeAgentRun } from '../dist/kanban/dispatch/agent-runs.js';
import { dispatchingGateway, median, printTable, removeDir, tempDir, waitFor } from './lib.mjs';

const RUNS = 15;

/** A claude stream-json transcript: init, partial messages, tool rounds, the result. */
function transcript(lines) {
  const out = [
    JSON.stringify({ type: 'system', subtype: 'init', session_id: 's-bench', tools: ['Bash'] }),
  ];
  const text = 'x'.repeat(200);
  for (let i = 0; out.length < lines - 1; i++) {
    if (i % 10 === 9) {
      out.push(
        JSON.stringify({
          type: 'assistant',
          session_id: 's-bench',
          message: { role: 'assistant', content: [{ type: 'text', text: `${text} ${i}` }] },
        }),
      );
    } else if (i % 10 === 8) {
      out.push(
        JSON.stringify({
          type: 'user',
          session_id: 's-bench',
          message: { content: [{ type: 'tool_result', content: `${text}\n`.repeat(4) }] },
        }),
      );
    } else {
      out.push(
        JSON.stringify({
          type: 'stream_event',
          event: { type: 'content_block_delta', delta: { type: 'text_delta', text: 'tok ' } },
          session_id: 's-bench',
        }),
      );
    }
  }
  out.push(
    JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'done',
      session_id: 's-bench',
      num_turns: 5,
      total_cost_usd: 0.01,
      usage: { input_tokens: 100, output_tokens: 50, cache_read_input_tokens: 10 },
      permission_denials: [],
    }),
  );
  return `${out.join('\n')}\n`;
}

/** An executable that prints `file` slowly enough for a few ticks to read it, then exits. */
function printer(dir, name, file, after = '') {
  const path = join(dir, name);
  writeFileSync(
    path,
    `#!/bin/sh\ncat > /dev/null\nhead -n 200 ${file}\nsleep 0.3\ntail -n +201 ${file}\n${after}\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

async function perRunCpu(gw, assignee, n) {
  const board = gw.kanban.board;
  const samples = [];
  for (let i = 0; i < n; i++) {
    const before = process.cpuUsage();
    const task = await board.create({ title: `${assignee} ${i}`, assignee }, { kind: 'api' });
    await waitFor(
      `${task.id} done`,
      async () => {
        const t = await board.tasks.get(task.id);
        if (t?.status !== 'done') return null;
        const runs = await board.runs.forTask(task.id);
        return runs.every((r) => r.procGoneAt !== null) ? t : null;
      },
      60_000,
      5,
    );
    const used = process.cpuUsage(before);
    samples.push((used.user + used.system) / 1000);
  }
  return samples;
}

export async function run() {
  const dir = tempDir();
  try {
    mkdirSync(join(dir, 'daemon'));
    const lines = join(dir, 'transcript.jsonl');
    writeFileSync(lines, transcript(2000));
    const agentBin = printer(dir, 'claude-replay', lines);
    const plain = printer(
      dir,
      'plain',
      lines,
      `printf '{"status":"done","summary":"done"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
    );
    const gw = await dispatchingGateway(join(dir, 'daemon'), {
      workers: {
        tickSeconds: 0.1,
        killGraceSeconds: 1,
        defaultProfile: 'agent',
        profiles: {
          agent: { agent: { kind: 'claude', bin: agentBin } },
          plain: { command: [plain] },
        },
      },
    });
    const agentCpu = [];
    const plainCpu = [];
    // Interleaved, so both see the same machine.
    for (let i = 0; i < RUNS; i++) {
      agentCpu.push(...(await perRunCpu(gw, 'agent', 1)));
      plainCpu.push(...(await perRunCpu(gw, 'plain', 1)));
    }

    // The hold: a first run rate-limited with a reset 2 s ahead, the next started after it.
    const resetFile = join(dir, 'reset');
    const limited = join(dir, 'limited.sh');
    writeFileSync(
      limited,
      `#!/bin/sh
cat > /dev/null
if [ ! -e ${resetFile}.used ]; then
  touch ${resetFile}.used
  echo '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":'"$(cat ${resetFile})"'}}'
  echo '{"type":"result","subtype":"success","is_error":true,"result":"limit","api_error_status":429,"session_id":"s"}'
  exit 1
fi
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s"}'
`,
    );
    chmodSync(limited, 0o755);
    await gw.close();
    mkdirSync(join(dir, 'held'));
    const held = await dispatchingGateway(join(dir, 'held'), {
      workers: {
        tickSeconds: 1,
        rateLimitCooldownSeconds: 3600,
        defaultProfile: 'agent',
        profiles: { agent: { agent: { kind: 'claude', bin: limited } } },
      },
    });
    const after = [];
    for (let i = 0; i < 3; i++) {
      const resetAt = Math.ceil(Date.now() / 1000) + 2;
      writeFileSync(resetFile, String(resetAt));
      removeDir(`${resetFile}.used`);
      const task = await held.kanban.board.create({ title: `held ${i}` }, { kind: 'api' });
      const runs = await waitFor(
        `the run after the reset (${i})`,
        async () => {
          // Done, so this round's script has read its mark before the next round clears it.
          const r = await held.kanban.board.runs.forTask(task.id);
          return r.length === 2 && r[1].endedAt !== null ? r : null;
        },
        30_000,
        5,
      );
      after.push(runs[1].startedAt - resetAt * 1000);
    }
    await held.close();

    // 10,000 lines judged as after a restart, beside parsing each line and nothing else.
    const big = join(dir, 'big');
    mkdirSync(big);
    writeFileSync(join(big, 'agent.jsonl'), transcript(10_000));
    const start = { kind: 'claude', model: null, resume: null };
    const judged = [];
    const parsed = [];
    for (let i = 0; i < 11; i++) {
      let t = performance.now();
      judgeAgentRun(big, start, { exitCode: 0, signal: null }, '', 1, Date.now(), 1000);
      judged.push(performance.now() - t);
      t = performance.now();
      for (const line of readFileSync(join(big, 'agent.jsonl'), 'utf8').split('\n'))
        if (line) JSON.parse(line);
      parsed.push(performance.now() - t);
    }
    return printTable('Agents', [
      {
        figure: 'daemon CPU per agent run (2,000 lines printed, its verdict read from them)',
        unit: 'ms',
        value: median(agentCpu),
        baselineName: 'the same lines from a command, verdict in result.json',
        baseline: median(plainCpu),
        goal: '≤ 1.2×',
      },
      {
        figure: 'a 10,000-line agent.jsonl judged (as after a restart)',
        unit: 'ms',
        value: median(judged),
        baselineName: 'JSON.parse of every line',
        baseline: median(parsed),
        goal: '≤ 50 ms',
      },
      {
        figure: 'a held profile’s next run started after the reset (tickSeconds 1)',
        unit: 'ms',
        value: Math.max(...after),
        baselineName: 'the tick',
        baseline: 1000,
        goal: 'within 1 s',
      },
    ]);
  } finally {
    removeDir(dir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
