// Command-line parsing helpers: strict flags, durations like 30m, and usage errors (exit 64).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';

export function usageError(message: string): ExitError {
  return new ExitError(ExitCode.usage, `usage error: ${message}`);
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs in strict mode; unknown flags and missing values become usage errors. */
export function parseFlags<T extends Options>(args: string[], options: T, positionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: positionals > 0 });
  } catch (err) {
    throw usageError((err as Error).message);
  }
  if (parsed.positionals.length > positionals) {
    throw usageError(`unexpected argument "${parsed.positionals[positionals]}"`);
  }
  return parsed;
}

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** "90", "90s", "30m", "1.5h", "250ms" → seconds. */
export function parseDuration(flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text);
  if (!match) throw usageError(`${flag} expects a duration like 90s, 30m or 2h, got "${text}"`);
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] ?? 's']!;
  if (seconds <= 0) throw usageError(`${flag} must be more than zero`);
  return seconds;
}

/** A whole number within [min, max]. */
export function parseInteger(flag: string, text: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw usageError(`${flag} expects a whole number from ${min} to ${max}, got "${text}"`);
  }
  return Number(text);
}

/** An amount of dollars, more than zero (cents and below allowed). */
export function parseDollars(flag: string, text: string): number {
  const amount = Number(text.replace(/^\$/, ''));
  if (!/^\$?\d+(\.\d+)?$/.test(text) || !(amount > 0) || amount > 1e6)
    throw usageError(`${flag} expects dollars like 5 or 2.50, more than 0, got "${text}"`);
  return amount;
}
