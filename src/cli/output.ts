// How commands print: one JSON document with --json, human text otherwise; text that came from
// somebody else (a title from a chat) cannot drive the operator's terminal.
export function print(json: boolean, value: unknown, text: () => string): void {
  const out = json ? JSON.stringify(value, null, 2) : printable(text());
  process.stdout.write(`${out}\n`);
}

/** Control characters (escape sequences, bells) and bidi overrides, but line breaks and tabs. */
const UNPRINTABLE = /(?![\n\t])[\p{Cc}\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

/** `text` with its control and bidi characters shown as \u{…} instead of obeyed. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const parts = [
    [Math.floor(s / 86400), 'd'],
    [Math.floor((s % 86400) / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'm'],
    [s % 60, 's'],
  ] as const;
  const shown = parts.filter(([n]) => n > 0).map(([n, unit]) => `${n}${unit}`);
  return shown.length > 0 ? shown.join(' ') : '0s';
}
