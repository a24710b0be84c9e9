/**
 * What a page's worker may read differently from the page (subject.browserSignals.mismatch), each
 * with the name a reason gives it. The one list of them: @warden/browser compares these and
 * @warden/client forwards only these, each from a copy generated from this module
 * (`node scripts/scopeFields.mjs` writes their `src/generated/scopeFields.ts`; their drift tests
 * fail until it is run).
 */
export const SCOPE_FIELD_LABELS = {
  userAgent: "user agent",
  platform: "platform",
  hardwareConcurrency: "processor count",
  languages: "languages",
  userAgentData: "client hints",
  webgl: "graphics renderer",
} as const;

export type ScopeField = keyof typeof SCOPE_FIELD_LABELS;

export const SCOPE_FIELDS = Object.keys(SCOPE_FIELD_LABELS) as ScopeField[];
