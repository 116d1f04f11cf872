// Texts longer than a platform accepts are cut with a visible marker, never refused for length.

/** `text` cut to at most `limit` UTF-16 code units, ending with a marker saying what was cut. */
export function fitText(text: string, limit: number | undefined): string {
  if (limit === undefined || text.length <= limit) return text;
  const marker = (cut: number) => `… [${cut} more characters cut]`;
  let keep = limit - marker(text.length).length;
  // Never split a surrogate pair.
  const code = text.charCodeAt(keep - 1);
  if (code >= 0xd800 && code <= 0xdbff) keep--;
  return `${text.slice(0, keep)}${marker(text.length - keep)}`;
}
