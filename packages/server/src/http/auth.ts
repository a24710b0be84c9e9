import type { FastifyReply, FastifyRequest } from "fastify";
import { hashApiKey, isWellFormedApiKey } from "../admin/apiKeys.js";
import { consoleCaller } from "../console/session.js";
import type { Scope } from "../domain.js";
import { ApiError } from "../errors.js";
import type { Caller } from "../operations/caller.js";
import { type Store, StoreUnavailableError } from "../store/interfaces.js";
import { remainingBudget, within } from "./budget.js";
import type { RouteSettings } from "./types.js";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The caller on routes that never degrade: the authentication hook has set it or answered already.
 * (Only verify can reach its handler without one, and it answers the degraded challenge instead.)
 */
export function requireCaller(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error("authentication hook did not run on this route");
  return request.caller;
}

/** After a re-check of a key that failed (the store could not answer), the next waits this long. */
const RECHECK_RETRY_MS = 1000;

type KeyLookup = () => Promise<{ key: { id: string; revokedAt: number | null } } | undefined>;

/**
 * Callers last seen active, per key hash, in memory only (least recently used dropped past `max`),
 * each with when the store last said its key was active (on `clock`). Keys and tenants never change
 * after creation except for revocation, so a remembered caller is right until its key is revoked:
 * verify authenticates from here and has the store refuse its event if the key was revoked meanwhile
 * (then `forgetKey`); page tokens, which write nothing, have a caller checked more than a few seconds
 * ago checked again in the background (`recheck`); other routes read the store every time and use
 * this only while the store cannot answer.
 */
export class KnownCallers {
  private readonly entries = new Map<string, { caller: Caller; checkedAt: number }>();
  /** Re-checks in flight, and when a failed one may be tried again, per hash. */
  private readonly rechecks = new Map<string, number>();
  constructor(
    private readonly max = 10_000,
    private readonly clock: () => number = Date.now,
  ) {}
  /** Remembers a caller whose key the store has just said is active. */
  remember(hash: string, caller: Caller): void {
    // Shared by every later request with this key: nothing may change it.
    Object.freeze(caller.key.scopes);
    Object.freeze(caller.key);
    Object.freeze(caller.tenant);
    this.entries.delete(hash);
    this.entries.set(hash, { caller, checkedAt: this.clock() });
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.forget(oldest);
    }
  }
  recall(hash: string): Caller | undefined {
    return this.entries.get(hash)?.caller;
  }
  /** Whether the remembered key was checked within the last `ms`. */
  checkedWithin(hash: string, ms: number): boolean {
    const entry = this.entries.get(hash);
    return entry !== undefined && this.clock() - entry.checkedAt <= ms;
  }
  /**
   * Asks the store about a remembered key again, in the background, once at a time per key (and not
   * again within RECHECK_RETRY_MS of a failed try): active, it is checked now; revoked or gone, it is
   * forgotten. The request that asked goes on with the caller as last checked.
   */
  recheck(hash: string, lookup: KeyLookup): void {
    const waitUntil = this.rechecks.get(hash);
    if (waitUntil !== undefined && (waitUntil === Number.POSITIVE_INFINITY || waitUntil > this.clock()))
      return;
    this.rechecks.set(hash, Number.POSITIVE_INFINITY);
    lookup().then(
      (found) => {
        this.rechecks.delete(hash);
        const entry = this.entries.get(hash);
        if (!entry) return;
        if (found && found.key.revokedAt === null) entry.checkedAt = this.clock();
        else this.forget(hash);
      },
      () => {
        if (this.entries.has(hash)) this.rechecks.set(hash, this.clock() + RECHECK_RETRY_MS);
        else this.rechecks.delete(hash);
      },
    );
  }
  forget(hash: string): void {
    this.entries.delete(hash);
    this.rechecks.delete(hash);
  }
  forgetKey(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.caller.key.id === keyId) this.entries.delete(hash);
  }
}

/**
 * The authentication hook: Bearer API key → caller, then the route's scope. A revocation takes effect
 * at once in every process: by default every request looks its key up in the store; with `fromMemory`
 * (verify) a caller seen before is taken from `known`, and the route's one write is made on condition
 * that the key is still active (events.record with activeKey). With `fromMemory: { forMs }` (page
 * tokens, which write nothing) a caller whose key the store checked longer than `forMs` ago is
 * served as well, and its key is checked again in the background (KnownCallers.recheck), so a
 * revocation stops it within `forMs` and one store read; while the store cannot answer, the last
 * check stands. With `patient` (the routes off verify's path) the lookup may wait for a busy
 * database (Store.patient).
 */
export function authenticator(
  store: Store,
  known: KnownCallers,
  options: { fromMemory?: boolean | { forMs: number }; patient?: boolean; clock?: () => number } = {},
) {
  const memoryMs = typeof options.fromMemory === "object" ? options.fromMemory.forMs : undefined;
  const keys = options.patient ? store.patient.apiKeys : store.apiKeys;
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const settings = request.routeOptions.config.warden as RouteSettings;
    const write = request.method !== "GET";
    if (
      settings.consoleSession &&
      options.clock &&
      (!write || settings.consoleWrite) &&
      request.headers.authorization === undefined
    ) {
      const signedIn = await consoleCaller(store, options.clock, request, { write });
      if (signedIn) {
        request.caller = withScope(signedIn, settings.scope);
        return;
      }
    }
    const match = BEARER.exec(request.headers.authorization ?? "");
    const apiKey = match?.[1];
    if (!apiKey || !isWellFormedApiKey(apiKey)) throw new ApiError("invalid_api_key");
    const hash = hashApiKey(apiKey);
    const remembered = known.recall(hash);
    let caller: Caller | undefined;
    if (options.fromMemory && remembered) {
      caller = remembered;
      if (memoryMs !== undefined && !known.checkedWithin(hash, memoryMs)) {
        known.recheck(hash, () => keys.findByHash(hash));
      }
    } else {
      try {
        const found = await within(remainingBudget(settings, reply.elapsedTime), keys.findByHash(hash));
        if (found && found.key.revokedAt === null) {
          caller = { key: found.key, tenant: found.tenant };
          known.remember(hash, caller);
        } else if (found) {
          known.forget(hash);
        }
      } catch (err) {
        if (!(err instanceof StoreUnavailableError) || settings.onStoreFault !== "degrade") throw err;
        request.log.warn({ err }, "authentication could not reach the store");
        // The handler answers the degraded verdict, signed for the tenant last seen with this key if any.
        request.storeFault = true;
        caller = remembered;
      }
    }
    if (!caller) {
      if (request.storeFault) {
        request.caller = null;
        return;
      }
      throw new ApiError("invalid_api_key");
    }
    request.caller = withScope(caller, settings.scope);
  };
}

function withScope(caller: Caller, scope: Scope): Caller {
  if (!caller.key.scopes.includes(scope)) {
    throw new ApiError("insufficient_scope", `This API key lacks the ${scope} scope.`);
  }
  return caller;
}
