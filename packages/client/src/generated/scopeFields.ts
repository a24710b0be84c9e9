// Generated from the server's operations/verify/signals/scopeFields.ts by scripts/scopeFields.mjs: do not edit.

/** What a page's worker may read differently from the page (subject.browserSignals.mismatch). */
export const SCOPE_FIELDS = ["userAgent", "platform", "hardwareConcurrency", "languages", "userAgentData", "webgl"] as const;

export type ScopeField = (typeof SCOPE_FIELDS)[number];
