// Does a value match a schema built with schema-types: a small interpreter for the keywords those
// builders write, with TypeBox's semantics. A config is checked once per start; compiling a
// validator for it (Ajv) or loading TypeBox costs tens of ms, interpreting it well under one.
type Schema = Readonly<Record<string, unknown>>;

/** Keywords that describe rather than constrain. */
const ANNOTATIONS = new Set(['$id', 'title', 'description', 'default', 'examples', 'expected']);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const TYPES: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  array: (v) => Array.isArray(v),
  object: isObject,
};

function objectMatches(schema: Schema, value: Record<string, unknown>): boolean {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, Schema>);
  for (const key of (schema.required ?? []) as string[])
    if (!(key in value) || value[key] === undefined) return false;
  for (const [key, item] of Object.entries(value)) {
    const property = properties[key];
    if (property) {
      if (item !== undefined && !matches(property, item)) return false;
      continue;
    }
    const matching = patterns.filter(([pattern]) => new RegExp(pattern).test(key));
    if (matching.length === 0 && schema.additionalProperties === false) return false;
    if (matching.some(([, pattern]) => !matches(pattern, item))) return false;
  }
  return true;
}

/** True if `value` matches `schema`; throws on a keyword it does not know (never guesses). */
export function matches(schema: Schema, value: unknown): boolean {
  for (const [keyword, arg] of Object.entries(schema)) {
    switch (keyword) {
      case 'type':
        if (!TYPES[arg as string]!(value)) return false;
        break;
      case 'anyOf':
        if (!(arg as Schema[]).some((option) => matches(option, value))) return false;
        break;
      case 'const':
        if (value !== arg) return false;
        break;
      case 'minimum':
        if (typeof value === 'number' && value < (arg as number)) return false;
        break;
      case 'maximum':
        if (typeof value === 'number' && value > (arg as number)) return false;
        break;
      case 'exclusiveMinimum':
        if (typeof value === 'number' && value <= (arg as number)) return false;
        break;
      case 'minLength':
        if (typeof value === 'string' && value.length < (arg as number)) return false;
        break;
      case 'maxLength':
        if (typeof value === 'string' && value.length > (arg as number)) return false;
        break;
      case 'pattern':
        if (typeof value === 'string' && !new RegExp(arg as string).test(value)) return false;
        break;
      case 'minItems':
        if (Array.isArray(value) && value.length < (arg as number)) return false;
        break;
      case 'items':
        if (Array.isArray(value) && !value.every((item) => matches(arg as Schema, item)))
          return false;
        break;
      case 'properties':
      case 'patternProperties':
        if (isObject(value) && !objectMatches(schema, value)) return false;
        break;
      case 'required':
      case 'additionalProperties':
        // Checked with the properties (an object schema here always has them).
        break;
      default:
        if (!ANNOTATIONS.has(keyword)) throw new Error(`schema keyword "${keyword}" is not known`);
    }
  }
  return true;
}
