import { VELOCITY_KINDS, type VelocityKind } from "../../policy/tenantPolicy.js";
import { CAMPAIGN_CODES } from "./signals/campaign.js";
import { SIGNALS, type SignalCode } from "./signals/registry.js";

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

/** The codes of every signal's findings (signals/registry.ts), in the registry's order. */
const SIGNAL_CODES = Object.assign({}, ...SIGNALS.map((s) => s.codes)) as Record<SignalCode, ReasonCategory>;

/** Codes of what is not a signal's finding: tenant rules, the decision itself, challenges, modes. */
const OTHER_CODES = {
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
export type ReasonCode = SignalCode | keyof typeof OTHER_CODES | VelocityCode | keyof typeof CAMPAIGN_CODES;

/** Every code a verdict's reasonDetails can carry, with its category. */
export const REASON_CODES: Readonly<Record<ReasonCode, ReasonCategory>> = Object.freeze({
  ...SIGNAL_CODES,
  ...OTHER_CODES,
  ...(Object.fromEntries(VELOCITY_KINDS.map((k) => [`velocity_${k}`, "velocity"])) as Record<
    VelocityCode,
    "velocity"
  >),
  ...CAMPAIGN_CODES,
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
