import { VELOCITY_KINDS, type VelocityKind } from "../../policy/tenantPolicy.js";

/**
 * The machine form of a verdict's reasons (docs/api.md#reason-codes: "an additive object form (code, message,
 * category)"): `reasonDetails[i]` is `reasons[i]` with a stable code and a category to group by. The
 * strings of `reasons` stay as they are. Every code is in this one catalogue; docs/api.md lists it
 * (reasonCodes.test.ts checks the two agree).
 */
export const REASON_CATEGORIES = [
  "agent",
  "browser",
  "page",
  "tls",
  "email",
  "network",
  "form",
  "velocity",
  "policy",
  "evidence",
  "decision",
  "challenge",
  "mode",
  "operational",
] as const;
export type ReasonCategory = (typeof REASON_CATEGORIES)[number];

const FIXED = {
  agent_verified: "agent",
  agent_signature_invalid: "agent",
  agent_signature_unverified: "agent",
  ua_missing: "browser",
  ua_unrecognized: "browser",
  ua_automation: "browser",
  browser_headers_missing: "browser",
  browser_headers_impossible: "browser",
  browser_consistent: "browser",
  client_hints_mismatch: "browser",
  header_order_override: "browser",
  fetch_metadata_navigation_json: "browser",
  page_webdriver: "page",
  page_worker_headless: "page",
  page_scope_mismatch: "page",
  page_evidence_missing: "page",
  page_token_invalid: "page",
  page_submitted_fast: "page",
  page_token_expired: "page",
  page_other_user_agent: "page",
  page_other_network: "page",
  page_input_without_keys: "page",
  page_pointer_teleported: "page",
  page_synthetic_events: "page",
  tls_library: "tls",
  tls_not_browser: "tls",
  tls_other_browser: "tls",
  tls_unfamiliar: "tls",
  email_disposable: "email",
  email_invalid: "email",
  email_random: "email",
  hosting_network: "network",
  form_links: "form",
  tenant_deny_list: "policy",
  tenant_allow_list: "policy",
  tenant_verified_agents: "policy",
  no_evidence: "evidence",
  no_risk_signal: "evidence",
  risk_estimate: "decision",
  challenge_cleared: "challenge",
  challenge_cleared_after_degraded: "challenge",
  clear_not_honoured: "challenge",
  log_only: "mode",
  degraded: "operational",
} as const satisfies Record<string, ReasonCategory>;

export type VelocityCode = `velocity_${VelocityKind}`;
export type ReasonCode = keyof typeof FIXED | VelocityCode;

/** Every code a verdict's reasonDetails can carry, with its category. */
export const REASON_CODES: Readonly<Record<ReasonCode, ReasonCategory>> = Object.freeze({
  ...FIXED,
  ...(Object.fromEntries(VELOCITY_KINDS.map((k) => [`velocity_${k}`, "velocity"])) as Record<
    VelocityCode,
    "velocity"
  >),
});

/** The codes in catalogue order (what a filter or a breakdown by code accepts). */
export const REASON_CODE_LIST = Object.keys(REASON_CODES) as ReasonCode[];

export interface ReasonDetail {
  code: ReasonCode;
  category: ReasonCategory;
  message: string;
}

export const reason = (code: ReasonCode, message: string): ReasonDetail => ({
  code,
  category: REASON_CODES[code],
  message,
});
