import { sha256Hex } from "../../../lib/crypto.js";
import type { ReasonCategory } from "../reasonCodes.js";
import type { Finding } from "./findings.js";
import type { Signal } from "./signal.js";

/**
 * subject.formData / subject.formDataHashed, whose structure the API leaves to the integration (docs/api.md): read generically.
 * Counted: fields (members of an object, items of an array), links in free text, and up to
 * MAX_REPEAT_KEYS values long enough to be free text, whose hashes are counted across attempts.
 */
export interface FormDataSignal {
  present: boolean;
  fields: number;
  links: number;
  /** Distinct hashes of values (hashed here for formData; as given, lower-cased, for formDataHashed) to count repeats of. */
  repeatKeys: string[];
}

const MAX_REPEAT_KEYS = 3;
/** Shorter values (names, companies, stock phrases) repeat legitimately and are not counted. */
const MIN_FREE_TEXT = 40;
const MAX_VALUES = 200;
const LINK = /\b(?:https?:\/\/|www\.)[^\s<>"]+|\[url[=\]]/gi;

/** The first MAX_VALUES strings, depth first. Iterative: no nesting can exhaust the stack. */
function values(input: unknown, out: string[]): void {
  const pending: unknown[] = [input];
  while (pending.length > 0 && out.length < MAX_VALUES) {
    const v = pending.pop();
    if (typeof v === "string") out.push(v);
    else if (typeof v === "object" && v !== null) {
      const children = Array.isArray(v) ? v : Object.values(v);
      for (let i = children.length - 1; i >= 0; i--) pending.push(children[i]);
    }
  }
}

function fieldCount(input: unknown): number {
  if (Array.isArray(input)) return input.length;
  if (typeof input === "object" && input !== null) return Object.keys(input).length;
  return input === undefined ? 0 : 1;
}

export function readFormData(formData: unknown, formDataHashed: unknown): FormDataSignal {
  const present = formData !== undefined || formDataHashed !== undefined;
  const raw: string[] = [];
  values(formData, raw);
  const hashed: string[] = [];
  values(formDataHashed, hashed);
  let links = 0;
  for (const v of raw) links += v.match(LINK)?.length ?? 0;
  // Distinct texts: one request that repeats a text is one attempt with it (and its velocity key
  // must be counted once), and repeats must not push other texts out of the first MAX_REPEAT_KEYS.
  const repeatKeys = [
    ...new Set([
      ...raw
        .map((v) => v.trim().toLowerCase().replace(/\s+/g, " "))
        .filter((v) => v.length >= MIN_FREE_TEXT)
        .map((v) => sha256Hex(v)),
      ...hashed.filter((h) => h.length >= 16).map((h) => h.toLowerCase()),
    ]),
  ].slice(0, MAX_REPEAT_KEYS);
  return { present, fields: fieldCount(formData) + fieldCount(formDataHashed), links, repeatKeys };
}

export function formDataFindings(
  sig: FormDataSignal,
  weights: { perLink: number; linksCap: number },
): Finding[] {
  if (sig.links === 0) return [];
  return [
    {
      id: "form_links",
      logOdds: Math.min(weights.linksCap, weights.perLink * sig.links),
      reason: `The submitted form carries ${sig.links} link${sig.links === 1 ? "" : "s"} in free text.`,
    },
  ];
}

/** The reason codes of this signal's findings, with their category. */
const CODES = { form_links: "form" } as const satisfies Record<string, ReasonCategory>;

export const formDataSignal: Signal<keyof typeof CODES> = {
  name: "form data",
  codes: CODES,
  findings: ({ form, model: { weights: w } }) =>
    formDataFindings(form, { perLink: w.formLinkEach, linksCap: w.formLinksCap }),
};
