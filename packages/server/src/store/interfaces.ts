/**
 * The store contract: `Store`, composed of one store per area, each declared with its records in
 * a module of contract/ (tenants, keys, counters, idempotency, events, feedback, challenges,
 * agents, policies, insights, consoleSessions, removal; errors: the faults), all re-exported here.
 * Every adapter implements it and passes the shared suites (testing/contract/) against a real
 * database.
 *
 * Guarantees are stated per method. "Atomic" means the method is one transaction (or one statement)
 * whose effect is all-or-nothing and correct when many processes share one database.
 * Stores hold no business rules beyond those guarantees.
 * The vocabulary the records are written in (decisions, actor types, the event record…) is domain.ts.
 *
 * Every method may reject with StoreUnavailableError when the database cannot answer in time.
 */

import type { AgentStore } from "./contract/agents.js";
import type { ChallengeStore } from "./contract/challenges.js";
import type { ConsoleSessionStore } from "./contract/consoleSessions.js";
import type { CounterStore } from "./contract/counters.js";
import type { EventStore } from "./contract/events.js";
import type { FeedbackStore } from "./contract/feedback.js";
import type { IdempotencyStore } from "./contract/idempotency.js";
import type { InsightStore } from "./contract/insights.js";
import type { ApiKeyStore, SigningKeyStore } from "./contract/keys.js";
import type { PolicyStore } from "./contract/policies.js";
import type { EventRemovalStore } from "./contract/removal.js";
import type { TenantStore } from "./contract/tenants.js";

export * from "./contract/agents.js";
export * from "./contract/challenges.js";
export * from "./contract/consoleSessions.js";
export * from "./contract/counters.js";
export * from "./contract/errors.js";
export * from "./contract/events.js";
export * from "./contract/feedback.js";
export * from "./contract/idempotency.js";
export * from "./contract/insights.js";
export * from "./contract/keys.js";
export * from "./contract/policies.js";
export * from "./contract/removal.js";
export * from "./contract/tenants.js";

/** What the routes off verify's path read and count besides their own areas (Store.patient). */
export interface PatientCalls {
  readonly apiKeys: Pick<ApiKeyStore, "findByHash">;
  readonly counters: Pick<CounterStore, "hit">;
  readonly idempotency: Pick<IdempotencyStore, "find">;
}

export interface Store {
  readonly tenants: TenantStore;
  readonly apiKeys: ApiKeyStore;
  readonly signingKeys: SigningKeyStore;
  readonly counters: CounterStore;
  readonly events: EventStore;
  readonly idempotency: IdempotencyStore;
  readonly feedback: FeedbackStore;
  readonly challenges: ChallengeStore;
  readonly agents: AgentStore;
  readonly policies: PolicyStore;
  readonly insights: InsightStore;
  readonly consoleSessions: ConsoleSessionStore;
  readonly removal: EventRemovalStore;
  /**
   * The key lookups, counters and idempotent replays of the routes off verify's 50 ms path
   * (challenge, feedback, the console and its sign-in): the same data as `apiKeys`, `counters` and
   * `idempotency`, with statements that may wait for a busy database (PostgreSQL: the patient pool
   * and its timeout), so that a database too slow for verify's deadline does not refuse them. Verify
   * and the page tokens use the others. SQLite: the same stores.
   */
  readonly patient: PatientCalls;
  /** Resolves when the store can take writes (a write probe: readiness, GET /readyz); rejects otherwise. */
  ping(): Promise<void>;
  /**
   * Readies what the request path uses before the first request needs it, writing nothing: opens the
   * connections a pool keeps (PostgreSQL: its minimum, each answering a read) and loads Redis's
   * counter script. Rejects like `ping` when a server is unreachable; the caller carries on.
   */
  warmUp(): Promise<void>;
  close(): Promise<void>;
  /**
   * With counters in Redis (WARDEN_REDIS_URL): how many counter calls since the start went to the
   * store's own counters because Redis failed or outlasted the store timeout. While that lasts, a
   * key's rate limit and velocity counts are split between Redis and the store (/metrics:
   * warden_redis_fallback_calls).
   */
  readonly counterFallbacks?: () => number;
}
