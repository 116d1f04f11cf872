// Request validation: bodies are strict (no coercion, unknown fields rejected); query and params coerce strings.
import { Ajv } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

const shared = { allErrors: false, removeAdditional: false, useDefaults: true } as const;
const strictAjv = new Ajv({ ...shared, coerceTypes: false });
const coercingAjv = new Ajv({ ...shared, coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  return ajv.compile(schema);
};
