// Request validation: bodies are strict (no coercion, unknown fields rejected); query and params coerce strings.
import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

const shared = { allErrors: false, removeAdditional: false, useDefaults: true } as const;
// Made at the first request that needs one, as the schemas are: not in the time to serve.
let strictAjv: Ajv | undefined;
let coercingAjv: Ajv | undefined;
const ajvFor = (httpPart: string | undefined): Ajv =>
  httpPart === 'body'
    ? (strictAjv ??= new Ajv({ ...shared, coerceTypes: false }))
    : (coercingAjv ??= new Ajv({ ...shared, coerceTypes: 'array' }));

/** A number in a query or a path: decimal digits only, within what a safe integer holds. */
const DECIMAL = /^-?(0|[1-9]\d{0,15})$/;

/**
 * ajv coerces "Infinity", "1e400", "0x10" or " 5" to a number and skips its range checks for a
 * value that is not finite: a coerced number must have been written as a plain decimal integer.
 */
function nonDecimalNumber(
  raw: Record<string, unknown>,
  data: Record<string, unknown>,
): ValidateFunction['errors'] {
  for (const [key, value] of Object.entries(data)) {
    const given = raw[key];
    if (typeof value !== 'number' || typeof given !== 'string') continue;
    if (!DECIMAL.test(given) || !Number.isSafeInteger(value)) {
      return [
        {
          instancePath: `/${key}`,
          schemaPath: '#/type',
          keyword: 'type',
          params: { type: 'integer' },
          message: `must be a finite integer in decimal digits (got ${JSON.stringify(given.slice(0, 40))})`,
        },
      ];
    }
  }
  return null;
}

/**
 * Each schema is compiled on its route's first request, not at start-up: compiling all of them
 * was the largest part of the time to serve. Fastify reads `errors` off the function it is given.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown): boolean => {
    compiled ??= ajvFor(httpPart).compile(schema);
    const coerced = httpPart !== 'body' && typeof data === 'object' && data !== null;
    const raw = coerced ? { ...(data as Record<string, unknown>) } : null;
    let ok = compiled(data);
    validate.errors = compiled.errors;
    if (ok && raw) {
      validate.errors = nonDecimalNumber(raw, data as Record<string, unknown>);
      ok = validate.errors === null;
    }
    return ok;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate;
};
