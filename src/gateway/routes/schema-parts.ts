// Small pieces every API schema file builds with: one definition each.
import { Type, type TSchema } from '../../schema-types.js';

/** An object with exactly the properties given. */
export const closed = { additionalProperties: false } as const;

/** The schema, or null. */
export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
