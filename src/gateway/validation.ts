// Request validation: bodies are strict (no coercion, unknown fields rejected); query and params coerce strings.
import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

const shared = { allErrors: false, removeAdditional: false, useDefaults: true } as const;
const strictAjv = new Ajv({ ...shared, coerceTypes: false });
const coercingAjv = new Ajv({ ...shared, coerceTypes: 'array' });

/**
 * Each schema is compiled on its route's first request, not at start-up: compiling all of them
 * was the largest part of the time to serve. Fastify reads `errors` off the function it is given.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown): boolean => {
    compiled ??= ajv.compile(schema);
    const ok = compiled(data);
    validate.errors = compiled.errors;
    return ok;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate;
};
