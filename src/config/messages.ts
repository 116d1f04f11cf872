// A config that does not match its schema, said in words: the first key that is wrong and what
// it accepts, from TypeBox's explanation (loaded only then).
import { createRequire } from 'node:module';
import type { ValueError } from '@sinclair/typebox/value';
import { matches } from '../schema-check.js';
import { ConfigError } from './config-error.js';
import { ConfigSchema, type RawConfig } from './schema.js';
import type { TSchema } from '../schema-types.js';

/** TypeBox's messages, said as what is allowed. */
const PHRASES: [RegExp, string][] = [
  [/^Unexpected property$/, 'unknown key'],
  [/^Expected string length greater or equal to (\d+)$/, 'must be at least $1 characters'],
  [/^Expected string length less or equal to (\d+)$/, 'must be at most $1 characters'],
  [/^Expected (?:number|integer) to be greater or equal to (\S+)$/, 'must be at least $1'],
  [/^Expected (?:number|integer) to be less or equal to (\S+)$/, 'must be at most $1'],
  [/^Expected (?:number|integer) to be greater than (\S+)$/, 'must be more than $1'],
  [/^Expected null$/, 'null'],
  [/^Expected '(.*)'$/, '"$1"'],
  [
    /^Expected string to match '\^\[\^\\s\/@\]\+\$'$/,
    'must be a host name (no spaces, "/" or "@")',
  ],
];

function phrase(message: string): string {
  for (const [pattern, text] of PHRASES)
    if (pattern.test(message)) return message.replace(pattern, text);
  return message.charAt(0).toLowerCase() + message.slice(1);
}

function describeError(error: ValueError): string {
  // A schema that says what it takes (an adapter's option) says it in its own words.
  if (typeof error.schema.expected === 'string') return `expected ${error.schema.expected}`;
  if (error.errors.length === 0) return phrase(error.message);
  // A union: say what each alternative would have accepted.
  const options = error.errors.map((branch) => {
    const first = branch.First();
    return first ? phrase(first.message) : 'valid';
  });
  const values = options.filter((o) => /^(null|".*")$/.test(o));
  const rules = options.filter((o) => !values.includes(o));
  const choice =
    values.length === 0 ? '' : values.length === 1 ? values[0]! : `one of ${values.join(', ')}`;
  if (rules.length === 0) return `must be ${choice}`;
  return choice ? `${rules.join(' and ')}, or ${choice}` : rules.join(' and ');
}

export function validate(candidate: unknown): RawConfig {
  return check(ConfigSchema, candidate, '') as RawConfig;
}

/**
 * `candidate` if it matches `schema`; else a ConfigError naming its first wrong key, under
 * `at` (the key the value sits at in the config, '' for the whole file).
 */
export function check(schema: TSchema, candidate: unknown, at: string): unknown {
  if (matches(schema, candidate)) return candidate;
  // TypeBox explains it best (which key, what each alternative accepts); loaded only for this.
  const { Value } = createRequire(import.meta.url)(
    '@sinclair/typebox/value',
  ) as typeof import('@sinclair/typebox/value');
  const first = Value.Errors(schema, candidate).First();
  if (!first) throw new Error('the config check and TypeBox disagree about this config');
  const key = [at, ...first.path.split('/').filter(Boolean)].filter(Boolean).join('.');
  throw new ConfigError(key || '(root)', describeError(first));
}
