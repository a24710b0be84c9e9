import type { Compilable, CompiledQuery } from "kysely";

const MARK = "\u0000warden-param:";

/**
 * A fixed-shape query built and compiled by Kysely once, then executed with new values: on the verify
 * hot path, building and compiling the query cost more than SQLite running it. `build` receives
 * marker values in place of the named parameters; each call swaps in the real ones by position.
 */
export function precompile<N extends string>(
  names: readonly N[],
  build: (params: Record<N, never>) => Compilable,
): (values: Record<N, unknown>) => CompiledQuery {
  const markers = Object.fromEntries(names.map((n) => [n, `${MARK}${n}`])) as unknown as Record<N, never>;
  const compiled = build(markers).compile();
  const slots = compiled.parameters.map((v) =>
    typeof v === "string" && v.startsWith(MARK) ? (v.slice(MARK.length) as N) : undefined,
  );
  const missing = names.filter((n) => !slots.includes(n));
  if (missing.length > 0)
    throw new Error(`precompile: parameters not bound by the query: ${missing.join(", ")}`);
  return (values) => ({
    ...compiled,
    parameters: compiled.parameters.map((fixed, i) => {
      const slot = slots[i];
      return slot === undefined ? fixed : values[slot];
    }),
  });
}
