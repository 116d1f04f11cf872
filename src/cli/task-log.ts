// `gatehouse task log ID`: the latest run's transcript, readable (docs/mcp.md); `--raw` for the
// log as the worker wrote it; `--follow` on until the task ends.
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readLogFrom } from '../kanban/dispatch/run-log.js';
import type { Answer } from './api-client.js';
import { parseFlags, usageError } from './args.js';
import { printable } from './output.js';
import { common, connect, oneId, type Api } from './task-api.js';

type Transcript = Answer<'/runs/{runId}/transcript', 'get'>;
type Entry = Transcript['entries'][number];
type Run = Answer<'/tasks/{id}', 'get'>['runs'][number];

/** A tool's output shows this many lines; the rest is counted. */
const RESULT_LINES = 10;

function cutNote(cut: number): string {
  return cut > 0 ? ` [${cut} characters cut]` : '';
}

function indented(text: string): string {
  const lines = text.replace(/\n$/, '').split('\n');
  const shown = lines.slice(0, RESULT_LINES).map((l) => `    ${l}`);
  if (lines.length > RESULT_LINES) shown.push(`    … ${lines.length - RESULT_LINES} more lines`);
  return shown.join('\n');
}

/** One entry as text: what the dashboard shows, on a terminal. */
export function entryText(e: Entry): string {
  switch (e.kind) {
    case 'text':
      return `${e.text}${cutNote(e.cut)}`;
    case 'tool_call':
      return `→ ${e.tool} ${e.input.replace(/\s*\n\s*/g, ' ')}${cutNote(e.cut)}`;
    case 'tool_result':
      return `  ${e.error ? '✗ failed' : '← ok'}${e.output.trim() ? `\n${indented(e.output)}` : ' (no output)'}${cutNote(e.cut)}`;
    case 'question':
      return `? asks: ${e.text}${e.options ? ` [${e.options.join(' / ')}]` : ''}`;
    case 'progress':
      return `… progress: ${e.percent === null ? '' : `${Math.round(e.percent)}% `}${e.note}`;
    case 'error':
      return `! ${e.text}${cutNote(e.cut)}`;
    case 'log':
      return `${e.text}${cutNote(e.cut)}`;
  }
}

/** Prints the run's transcript from `after` on; where the next read starts, and if it ended. */
async function printFrom(api: Api, run: Run, after: number) {
  let next = after;
  for (;;) {
    const t = (await api.call('GET', `/runs/${run.id}/transcript?after=${next}`)) as Transcript;
    // What the agent printed is somebody else's text: it cannot drive the terminal.
    for (const e of t.entries) process.stdout.write(`${printable(entryText(e))}\n`);
    if (t.next === next || t.ended) return { next: t.next, ended: t.ended };
    next = t.next;
  }
}

/**
 * An agent run's raw output is its JSON lines (its stderr is the log); a command's, its log.
 * Which it is, the transcript says (asked from past its end, it reads nothing).
 */
async function rawFile(api: Api, run: Run): Promise<'agent' | 'log'> {
  const end = Number.MAX_SAFE_INTEGER;
  const t = (await api.call('GET', `/runs/${run.id}/transcript?after=${end}`)) as Transcript;
  return t.kind ? 'agent' : 'log';
}

export async function log(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(
    args,
    { ...common, follow: { type: 'boolean' }, raw: { type: 'boolean' } },
    1,
  );
  const id = oneId(positionals, 'task log');
  const api = connect(values);
  if (values.follow && values.raw && !api.local)
    throw usageError(
      'task log --raw --follow reads the log file beside the daemon; with --url or GATEHOUSE_URL, follow the readable log (without --raw)',
    );
  const latest = async () => {
    const task = (await api.call('GET', `/tasks/${id}`)) as Answer<'/tasks/{id}', 'get'>;
    return { task, run: task.runs.at(-1) ?? null };
  };
  let { task, run } = await latest();
  if (!run) throw usageError(`task ${positionals[0]} has no runs yet`);
  if (!values.follow) {
    if (values.raw)
      process.stdout.write(
        String(
          await api.call('GET', `/runs/${run.id}/log?tail=100000&file=${await rawFile(api, run)}`),
        ),
      );
    else await printFrom(api, run, 0);
    return;
  }
  let offset = 0;
  for (;;) {
    let ended: boolean;
    if (values.raw) {
      // Following the raw log reads the run's file directly: the CLI runs beside the daemon.
      const file = await rawFile(api, run);
      const path = file === 'agent' ? join(dirname(run.logPath), 'agent.jsonl') : run.logPath;
      offset = await copyFrom(path, offset);
      ended = run.endedAt !== null;
    } else ({ next: offset, ended } = await printFrom(api, run, offset));
    if (task.status !== 'running' && run.endedAt !== null && ended) return;
    await sleep(300);
    const next = await latest();
    if (next.run && next.run.id !== run.id) {
      // What the run before printed after the last look (its last error, often) first.
      if (!values.raw) await printFrom(api, run, offset);
      offset = 0;
      if (!values.raw) process.stdout.write(`— run ${next.run.id} —\n`);
    }
    ({ task } = next);
    run = next.run ?? run;
  }
}

/** Copies what the file holds from `offset` on to stdout; the new offset. */
async function copyFrom(path: string, offset: number): Promise<number> {
  for (;;) {
    // Read as the daemon reads a log: a MiB at a time, never hanging on a FIFO.
    const chunk = await readLogFrom(path, offset, true);
    if (chunk.next === offset) return offset;
    process.stdout.write(chunk.text);
    offset = chunk.next;
  }
}
