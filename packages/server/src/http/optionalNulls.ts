/**
 * `null` on an optional member means "not sent": many JSON encoders write absent optionals as null.
 * Before validation, such members are removed wherever the route's schema declares an object with
 * properties, so null never turns into a misleading "is required" and never enters a fingerprint.
 * A null on a required member stays and is answered as missing (errorHandler.ts).
 */
interface ObjectSchema {
  type?: unknown;
  properties?: Record<string, unknown>;
  required?: readonly string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Walks the schema, not the data: bounded by the schema's own depth whatever the body holds. */
export function dropNullOptionals(schema: unknown, body: unknown): void {
  const pending: [ObjectSchema, Record<string, unknown>][] = [];
  if (isRecord(schema) && isRecord(body)) pending.push([schema as ObjectSchema, body]);
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [s, value] = next;
    const properties = s.properties;
    if (!isRecord(properties)) continue;
    for (const [name, member] of Object.entries(properties)) {
      if (!Object.hasOwn(value, name)) continue;
      const v = value[name];
      if (v === null && !(s.required ?? []).includes(name)) delete value[name];
      else if (isRecord(member) && isRecord(v)) pending.push([member as ObjectSchema, v]);
    }
  }
}

/** Whether the member at `instancePath` (`/subject/email`) is required by its parent in the schema. */
export function isRequiredMember(schema: unknown, instancePath: string): boolean {
  const names = instancePath.split("/").slice(1);
  let s: ObjectSchema | undefined = isRecord(schema) ? (schema as ObjectSchema) : undefined;
  for (const [i, name] of names.entries()) {
    if (!s || !isRecord(s.properties)) return false;
    if (i === names.length - 1) return (s.required ?? []).includes(name);
    const member = Object.hasOwn(s.properties, name) ? s.properties[name] : undefined;
    s = isRecord(member) ? (member as ObjectSchema) : undefined;
  }
  return false;
}
