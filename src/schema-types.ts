// The JSON Schema builders the config and the API are written with: TypeBox's own types, and the
// very objects TypeBox would build, without loading its 266 modules on the way to serving (80 ms
// of start-up). TypeBox itself is loaded only to explain a config that does not validate.
import type { Type as TypeBox } from '@sinclair/typebox';

export type { Static, TSchema } from '@sinclair/typebox';

const Kind = Symbol.for('TypeBox.Kind');
const OptionalKind = Symbol.for('TypeBox.Optional');

type Options = Record<string, unknown>;
interface Schema {
  [key: string | symbol]: unknown;
}

function build(kind: string, options: Options | undefined, shape: Options): Schema {
  return { ...options, [Kind]: kind, ...shape };
}

function optional(schema: Schema): Schema {
  return { ...schema, [OptionalKind]: 'Optional' };
}

function object(properties: Record<string, Schema>, options?: Options): Schema {
  const required = Object.keys(properties).filter((key) => !(OptionalKind in properties[key]!));
  return build('Object', options, {
    type: 'object',
    ...(required.length > 0 ? { required } : {}),
    properties,
  });
}

const builders = {
  String: (options?: Options) => build('String', options, { type: 'string' }),
  Integer: (options?: Options) => build('Integer', options, { type: 'integer' }),
  Number: (options?: Options) => build('Number', options, { type: 'number' }),
  Boolean: (options?: Options) => build('Boolean', options, { type: 'boolean' }),
  Null: (options?: Options) => build('Null', options, { type: 'null' }),
  Unknown: (options?: Options) => build('Unknown', options, {}),
  Literal: (value: string | number | boolean, options?: Options) =>
    build('Literal', options, { const: value, type: typeof value }),
  Array: (items: Schema, options?: Options) => build('Array', options, { type: 'array', items }),
  Union: (types: Schema[], options?: Options) =>
    types.length === 1 ? types[0]! : build('Union', options, { anyOf: types }),
  Optional: optional,
  Object: object,
  Partial: (schema: Schema, options?: Options) =>
    build('Object', options, {
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(schema.properties as Record<string, Schema>).map(([key, value]) => [
          key,
          optional(value),
        ]),
      ),
    }),
  Record: (key: Schema, value: Schema, options?: Options) =>
    build('Record', options, {
      type: 'object',
      patternProperties: { [(key.pattern as string | undefined) ?? '^(.*)$']: value },
    }),
  Ref: (schema: Schema, options?: Options) => build('Ref', options, { $ref: schema.$id }),
};

/** The subset of TypeBox's `Type` this project uses, typed as TypeBox types it. */
export const Type = builders as unknown as Pick<typeof TypeBox, keyof typeof builders>;

/** An object schema's options that refuse every key it does not name. */
export const closed = { additionalProperties: false } as const;
