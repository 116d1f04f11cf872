// A run's transcript (docs/mcp.md): what its agent said and did, read from the JSON lines it
// printed by its kind's own reader (no I/O here), in a form the dashboard and `gatehouse task
// log` show alike. A line that is not its agent's JSON (its error stream, a command's output)
// is shown as it is.
import type { AgentKind, TranscriptEntry } from './types.js';

/** A tool's output (or an agent's text) longer than this is cut; `cut` says by how much. */
export const MAX_ENTRY_CHARS = 16_384;

/** `text` at most MAX_ENTRY_CHARS long, and how many characters were cut. */
export function cut(text: string): { text: string; cut: number } {
  return text.length <= MAX_ENTRY_CHARS
    ? { text, cut: 0 }
    : { text: text.slice(0, MAX_ENTRY_CHARS), cut: text.length - MAX_ENTRY_CHARS };
}

/**
 * A call of a tool by the agent: gatehouse's question and progress tools become what they say;
 * an MCP tool is named `server.tool`.
 */
export function toolCall(
  id: string | null,
  server: string | null,
  tool: string,
  input: unknown,
): TranscriptEntry {
  const args = (input ?? {}) as Record<string, unknown>;
  if (server === 'gatehouse' && tool === 'ask_human' && typeof args.question === 'string')
    return {
      kind: 'question',
      text: args.question,
      options: Array.isArray(args.options) ? args.options.map(String) : null,
    };
  if (server === 'gatehouse' && tool === 'report_progress' && typeof args.note === 'string')
    return {
      kind: 'progress',
      note: args.note,
      percent: typeof args.percent === 'number' ? args.percent : null,
    };
  const shown = cut(typeof input === 'string' ? input : JSON.stringify(input ?? {}));
  return {
    kind: 'tool_call',
    id,
    tool: server ? `${server}.${tool}` : tool,
    input: shown.text,
    cut: shown.cut,
  };
}

export function toolResult(id: string | null, output: string, error: boolean): TranscriptEntry {
  const shown = cut(output);
  return { kind: 'tool_result', id, output: shown.text, error, cut: shown.cut };
}

export function textEntry(kind: 'text' | 'error' | 'log', text: string): TranscriptEntry {
  return { kind, ...cut(text) };
}

/** The text of MCP content blocks (`[{type: "text", text}]`) or a plain string. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined ? '' : JSON.stringify(content);
  return content
    .map((c: unknown) => {
      const block = (c ?? {}) as { text?: unknown; type?: unknown };
      if (typeof block.text === 'string') return block.text;
      // An image or a resource: named, not shown.
      return `[${typeof block.type === 'string' ? block.type : 'content'}]`;
    })
    .join('\n');
}

/**
 * The entries of whole lines a run printed: its agent's kind reads its JSON lines; without a
 * kind (a command's run) every line is shown as it is. Empty lines are passed over.
 */
export function transcriptOf(kind: AgentKind | null, text: string): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (!kind || !line.startsWith('{')) {
      entries.push(textEntry('log', line));
      continue;
    }
    // What the kind never shows (partial messages while a reply is written) is not parsed: a
    // line of that type begins so (a nested object of the same type does not make it one).
    if (kind.transcriptSkips.some((start) => line.startsWith(start))) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      entries.push(textEntry('log', line));
      continue;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) continue;
    const v = value as Record<string, unknown>;
    // Where gatehouse bounded a long output (docs/agents.md): say how much is not shown.
    if (v.type === 'gatehouse_cut' && typeof v.bytes === 'number')
      entries.push(textEntry('log', `[… ${v.bytes} bytes of output cut when the run ended]`));
    else entries.push(...kind.transcript(v));
  }
  return entries;
}
