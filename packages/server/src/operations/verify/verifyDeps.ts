import type { ErrorCode } from "../../errors.js";
import type { TenantPolicies } from "../../policy/tenantPolicies.js";
import type { Store } from "../../store/interfaces.js";
import type { SigningKeyring } from "../../tokens/signingKeys.js";
import type { TokenSettings } from "../../tokens/verdictToken.js";
import type { KeyLookup } from "../../webBotAuth/verifyAgent.js";
import type { RateLimitSettings, RateLimitState } from "../rateLimitWindow.js";
import type { ClearsInFlight } from "./clearsInFlight.js";
import type { DecisionModel } from "./decisionModel.js";
import type { KeysInFlight } from "./keysInFlight.js";
import type { PendingEvents } from "./pendingEvents.js";
import type { Verdict } from "./schema.js";
import type { HostingNetworks } from "./signals/hostingNetworks.js";

/** What verify needs, built once by the app (deps.ts) and shared by the route, the degraded path and the rehearsal. */
export interface VerifyDeps {
  store: Store;
  keyring: SigningKeyring;
  tokens: TokenSettings;
  /** The decision model's parameters. */
  model: DecisionModel;
  tenantPolicies: TenantPolicies;
  /** Where degraded verdicts' events wait while the store is down. */
  pendingEvents: PendingEvents;
  hosting: HostingNetworks;
  agentKeys: KeyLookup;
  /** Overall deadline; past it the answer is the degraded challenge. */
  deadlineMs: number;
  /** Per API key; counted in the same store call as the velocity counters. */
  rateLimit: RateLimitSettings;
  idempotencyTtlMs: number;
  /** Verifies with one idempotency key in flight in this process (keysInFlight.ts). */
  keysInFlight: KeysInFlight<VerifyResult>;
  /** Redemptions of a clear in flight in this process (clearsInFlight.ts). */
  clearsInFlight: ClearsInFlight;
  /** How long after a clear a re-verify may redeem it. */
  clearWindowMs: number;
  clock: () => number;
  /** Reports faults that were turned into degraded verdicts or happened after the response. */
  report: (err: unknown, what: string) => void;
}

/**
 * `rateLimit` is where the key stands once this request was counted (absent when it was not); a
 * refusal without `message` answers with the error catalogue's.
 */
export type VerifyResult =
  | { ok: true; verdict: Verdict; replayed: boolean; rateLimit?: RateLimitState }
  | { ok: false; code: ErrorCode; message?: string; rateLimit?: RateLimitState };

/** The caller was authenticated from memory; its key was revoked before the verdict was recorded. */
export function keyRevoked(): VerifyResult {
  return { ok: false, code: "invalid_api_key" };
}
