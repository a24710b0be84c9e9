import type { FastifyInstance } from "fastify";
import { ApiError, type ErrorCode } from "../errors.js";

/**
 * Limits every JSON body must meet before any route sees it. Every member of `subject` is attacker
 * controlled, so hostile shapes are refused here, in one iterative pass, with a 400 and a stable code:
 * nothing downstream (signals, fingerprints, the store) ever walks an unbounded structure, stores a
 * string PostgreSQL or UTF-8 cannot hold, or meets a number canonical JSON cannot write.
 */
export const JSON_LIMITS = Object.freeze({
  /** Nesting of objects and arrays; the body itself is level 1. */
  depth: 32,
  /** Items of one array, members of one object. */
  width: 1_000,
  /** Values in the whole body (every object, array, string, number, boolean and null). */
  values: 10_000,
  /** Characters of one string value. */
  stringLength: 16_384,
  /** Characters of one member name. */
  nameLength: 256,
});

export interface JsonProblem {
  code: Extract<
    ErrorCode,
    "nesting_too_deep" | "body_too_complex" | "string_too_long" | "invalid_string" | "invalid_number"
  >;
  /** Where, as a dotted path from the body (`subject.formData.0`), `body` for the top. */
  path: string;
  message: string;
}

interface Frame {
  value: unknown;
  depth: number;
  parent: Frame | undefined;
  name: string;
}

const pathOf = (frame: Frame | undefined): string => {
  const names: string[] = [];
  for (let f = frame; f?.parent; f = f.parent) names.push(f.name);
  return names.length === 0 ? "body" : names.reverse().join(".");
};

// A lone surrogate cannot be encoded as UTF-8 (RFC 7493, I-JSON); NUL ends strings in C and PostgreSQL.
const badString = (s: string): boolean => s.includes("\u0000") || !s.isWellFormed();

/** The first way `body` breaks JSON_LIMITS, or undefined. Iterative: no input can exhaust the stack. */
export function inspectJson(body: unknown): JsonProblem | undefined {
  const stack: Frame[] = [{ value: body, depth: 1, parent: undefined, name: "" }];
  let values = 0;
  const problem = (code: JsonProblem["code"], frame: Frame | undefined, message: string): JsonProblem => {
    const path = pathOf(frame);
    return { code, path, message: `${path}: ${message}` };
  };
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const { value } = frame;
    if (++values > JSON_LIMITS.values) {
      return problem("body_too_complex", frame, `the body holds more than ${JSON_LIMITS.values} values.`);
    }
    if (typeof value === "string") {
      if (value.length > JSON_LIMITS.stringLength) {
        return problem("string_too_long", frame, `longer than ${JSON_LIMITS.stringLength} characters.`);
      }
      if (badString(value)) return problem("invalid_string", frame, "holds a NUL or a lone surrogate.");
      continue;
    }
    // JSON.parse reads 1e999 as Infinity, which no later step can serialise or store (RFC 7493 §2.2:
    // numbers beyond IEEE 754 double precision are not interoperable). JSON has no NaN.
    if (typeof value === "number" && !Number.isFinite(value)) {
      return problem(
        "invalid_number",
        frame,
        "is a number too large to represent (it overflows to Infinity).",
      );
    }
    if (typeof value !== "object" || value === null) continue;
    if (frame.depth > JSON_LIMITS.depth) {
      return problem("nesting_too_deep", frame, `nests deeper than ${JSON_LIMITS.depth} levels.`);
    }
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((v, i) => [String(i), v])
      : Object.entries(value);
    if (entries.length > JSON_LIMITS.width) {
      return problem("body_too_complex", frame, `more than ${JSON_LIMITS.width} items or members.`);
    }
    for (const [name, v] of entries) {
      if (!Array.isArray(value)) {
        if (name.length > JSON_LIMITS.nameLength) {
          return problem("string_too_long", frame, `a member name is longer than ${JSON_LIMITS.nameLength}.`);
        }
        if (badString(name))
          return problem("invalid_string", frame, "a member name holds a NUL or a lone surrogate.");
      }
      stack.push({ value: v, depth: frame.depth + 1, parent: frame, name });
    }
  }
  return undefined;
}

/**
 * Replaces Fastify's JSON parser with the same parser (prototype-poisoning keys refused) followed by
 * inspectJson. The body cap applies first (413), so inspection never reads more than it allows.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, text, done) => {
    parse(request, text as string, (err: Error | null, value?: unknown) => {
      if (err) return done(err, undefined);
      const found = inspectJson(value);
      if (found) return done(new ApiError(found.code, found.message), undefined);
      done(null, value);
    });
  });
}
