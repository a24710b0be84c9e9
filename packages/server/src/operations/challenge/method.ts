import type { TOptional, TSchema } from "@sinclair/typebox";
import type { ChallengeMethod, EventRecord } from "../../domain.js";
import type { ErrorCode } from "../../errors.js";
import type { TenantPolicies } from "../../policy/tenantPolicies.js";
import type { RiskTier, TenantPolicy } from "../../policy/tenantPolicy.js";
import type { ChallengeRecord, Store } from "../../store/interfaces.js";
import type { KeyLookup } from "../../webBotAuth/verifyAgent.js";

/**
 * A challenge method: the friction one challenge asks for. Adding one is a folder of methods/
 * implementing this and one line in methods/registry.ts (CONTRIBUTING.md, "Add a challenge method");
 * challenge.ts selects, seals, orders the completion's failures and clears, whatever the method.
 */
export interface Method {
  /** Its name in the API: `prefer` entries and the challenge's `method`. */
  readonly name: ChallengeMethod;
  readonly proof: {
    /** The names a proof's `method` may give for it (docs/api.md#post-v1challenge-and-re-verify). */
    readonly names: readonly string[];
    /**
     * Whether a proof that gives no `method` is for it; no proof is claimed by two methods
     * (methods/registry.test.ts).
     */
    readonly claimsUnnamed?: (proof: Proof) => boolean;
    /** Its form in the request schema's description of `proof`, after "<name>: ". */
    readonly form: string;
    /** Its members of `proof`, with their descriptions, for the request schema (schema.ts). */
    readonly members: Readonly<Record<string, TOptional<TSchema>>>;
  };
  /** Whether it can be issued for this tenant and event now; a store fault thrown fails the issue. */
  issuable(issue: Issue): boolean | Promise<boolean>;
  /**
   * The instructions returned to the caller, and what completion checks, sealed at issue; a store
   * fault thrown fails the issue.
   */
  seal(issue: Issue, challengeId: string): Sealed | Promise<Sealed>;
  /** The proof against what was sealed; a failure leaves the challenge issued. */
  check(completion: Completion): Promise<ProofCheck>;
}

/** An issue being made: a challenged event of the tenant, for its own session. */
export interface Issue {
  deps: ChallengeDeps;
  tenantId: string;
  session: string;
  event: EventRecord;
  /** The tenant's compiled policy, read once for the issue. */
  policy: TenantPolicy;
  /** The tier sealed: the caller's or the event's own, whichever costs more (challenge.ts, eventTier). */
  tier: RiskTier;
}

/** What a method seals into the challenge at issue; a completion is checked against it alone. */
export type Sealed = Pick<ChallengeRecord, "difficulty" | "seed" | "instructions">;

/**
 * A completion being checked: an issued challenge of the tenant, for the same session, neither cleared
 * nor expired, with a proof for its method.
 */
export interface Completion {
  deps: ChallengeDeps;
  tenantId: string;
  challenge: ChallengeRecord;
  proof: Proof;
  /** Unix milliseconds. */
  now: number;
}

/** A completion's proof as the request carries it: its members are its method's to read and check. */
export type Proof = Readonly<Record<string, unknown>>;

export type ProofCheck = { ok: true; singleUse?: SingleUseProof } | Refusal;

/**
 * A proof that clears one challenge only (a SetupIntent, a WebAuthn credential): its reference,
 * unique across challenges in the store, and the answer when it already cleared another one.
 */
export interface SingleUseProof {
  ref: string;
  reused: Refusal;
}

/** An expected failure; without a message the catalogue's message for the code is used. */
export interface Refusal {
  ok: false;
  code: ErrorCode;
  message?: string;
}

export const refuse = (code: ErrorCode, message?: string): Refusal =>
  message === undefined ? { ok: false, code } : { ok: false, code, message };

/** What the challenge operation and its methods are built with, once (app.ts). */
export interface ChallengeDeps {
  store: Store;
  clock: () => number;
  ttlMs: number;
  payment: PaymentSettings;
  tenantPolicies: TenantPolicies;
  /** The agent registry, for web_bot_auth_stepup proofs (the same verifier as verify). */
  agentKeys: KeyLookup;
  signatureSkewSeconds: number;
  /** The methods that can be issued and completed: methods/registry.ts's METHODS. */
  methods: readonly Method[];
}

/** The payment provider's address and deadline, for payment_preauth proofs (WARDEN_STRIPE_*). */
export interface PaymentSettings {
  apiBase: URL;
  timeoutMs: number;
}
