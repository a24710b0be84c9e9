import { type TLiteral, type TUnion, Type } from "@sinclair/typebox";

/**
 * A JSON Schema union of string constants from one vocabulary array (`as const`), typed as the union
 * of its members: the schema and the TypeScript type come from the same list.
 */
export function literalUnion<const T extends readonly string[]>(
  values: T,
): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }> {
  return Type.Union(values.map((v) => Type.Literal(v))) as unknown as TUnion<{
    -readonly [K in keyof T]: TLiteral<T[K]>;
  }>;
}
