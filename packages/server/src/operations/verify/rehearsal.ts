import { CHROME_HEADERS, CHROME_UA } from "../../lib/chromeNavigation.js";
import { TenantPolicies } from "../../policy/tenantPolicies.js";
import type { Store } from "../../store/interfaces.js";
import type { Caller } from "../caller.js";
import { PendingEvents } from "./pendingEvents.js";
import type { VerifyRequest } from "./schema.js";
import type { VerifyDeps } from "./verifyDeps.js";

/**
 * Verify rehearsed at start-up, before the server listens (http/warmUp.ts): real requests through the
 * whole HTTP stack (parsing, validation, authentication, evidence, velocity, the decision, the signed
 * token, the event record, serialization), answered from deps whose store writes nothing. V8 compiles
 * a function when it first runs, so without this a new process's first verifies pay for compiling the
 * whole path inside their deadline (measured on three fresh processes on PostgreSQL: the first verify
 * of each took 60–110 ms and answered the degraded challenge).
 */

/** A tenant id no tenant can have (ids are lower-case letters, digits, `-` and `_`). */
export const REHEARSAL_TENANT = "warden:rehearsal";

/** The rehearsal's caller: it exists in memory only, for as long as the rehearsal runs. */
export function rehearsalCaller(now: number): Caller {
  return {
    tenant: { id: REHEARSAL_TENANT, rawPii: false, logOnly: false, createdAt: now },
    key: {
      id: "key_rehearsal",
      tenantId: REHEARSAL_TENANT,
      scopes: ["verify:write"],
      logOnly: false,
      createdAt: now,
      revokedAt: null,
    },
  };
}

/** Request bodies that between them reach every stateless signal and each decision. */
export const REHEARSAL_REQUESTS: readonly VerifyRequest[] = [
  {
    action: "signup",
    session: "rehearsal-session",
    surface: "app.example.com/signup",
    subject: {
      userAgent: CHROME_UA,
      headers: { ...CHROME_HEADERS },
      emailSha256: "0".repeat(64),
      ipTrunc: "198.51.100.0/24",
    },
  },
  {
    action: "trial_activation",
    subject: { userAgent: "curl/8.5.0", ipTrunc: "203.0.113.0/24" },
    context: { decisionCosts: { falseAllow: 2, falseChallenge: 1, falseDeny: 4 } },
  },
  { action: "api_key_issue", subject: {}, context: { logOnly: true } },
  { action: "demo_request", subject: { userAgent: "python-requests/2.32.3" } },
];

/**
 * The store as the rehearsal sees it: its reads are real (they ask for a tenant that cannot exist),
 * its writes are not made. Counters read as first hits; events are "recorded" without a write.
 */
function rehearsalStore(store: Store): Store {
  return {
    ...store,
    counters: {
      ...store.counters,
      hit: async (hits) => hits.map(() => ({ current: 1, previous: 0, elapsed: 0 })),
    },
    events: { ...store.events, record: async () => ({ kind: "recorded" }) },
  };
}

/**
 * Verify's deps for the rehearsal caller: nothing is written (a degraded answer's event goes to the
 * rehearsal store too), and the deadline is generous, since the first requests are the slow ones this
 * exists for.
 */
export function rehearsalDeps(deps: VerifyDeps): VerifyDeps {
  const store = rehearsalStore(deps.store);
  return {
    ...deps,
    store,
    tenantPolicies: new TenantPolicies(store, 60_000, deps.clock),
    pendingEvents: new PendingEvents(store, { capacity: REHEARSAL_REQUESTS.length, retryMs: 60_000 }),
    deadlineMs: 1000,
    report: () => {},
  };
}
