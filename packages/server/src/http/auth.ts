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

/**
 * Callers last seen active, per key hash, in memory only (least recently used dropped past `max`),
 * each with when the store last said its key was active. Keys and tenants never change after
 * creation except for revocation, so a remembered caller is right until its key is revoked: verify
 * authenticates from here and has the store refuse its event if the key was revoked meanwhile (then
 * `forgetKey`); page tokens, which write nothing, take a caller checked within the last few seconds;
 * other routes read the store every time and use this only while the store cannot answer.
 */
export class KnownCallers {
  private readonly entries = new Map<string, { caller: Caller; checkedAt: number }>();
  constructor(private readonly max = 10_000) {}
  /** `checkedAt`: when the store said the key was active (epoch ms; never, by default). */
  remember(hash: string, caller: Caller, checkedAt = Number.NEGATIVE_INFINITY): void {
    // Shared by every later request with this key: nothing may change it.
    Object.freeze(caller.key.scopes);
    Object.freeze(caller.key);
    Object.freeze(caller.tenant);
    this.entries.delete(hash);
    this.entries.set(hash, { caller, checkedAt });
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
  /** The remembered caller, if its key was checked at `checkedSince` or later (by default: ever). */
  recall(hash: string, checkedSince = Number.NEGATIVE_INFINITY): Caller | undefined {
    const entry = this.entries.get(hash);
    return entry && entry.checkedAt >= checkedSince ? entry.caller : undefined;
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
 * tokens, which write nothing) only a caller whose key the store checked within `forMs` is, so a
 * revocation stops it within that long; an older one is checked again, and used as it is only while
 * the store cannot answer. With `patient` (the routes off verify's path) the lookup may wait for a
 * busy database (Store.patient).
 */
export function authenticator(
  store: Store,
  known: KnownCallers,
  options: { fromMemory?: boolean | { forMs: number }; patient?: boolean; clock?: () => number } = {},
) {
  const clock = options.clock ?? Date.now;
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
    if (
      options.fromMemory &&
      remembered &&
      (memoryMs === undefined || known.recall(hash, clock() - memoryMs) !== undefined)
    ) {
      caller = remembered;
    } else {
      try {
        const found = await within(remainingBudget(settings, reply.elapsedTime), keys.findByHash(hash));
        if (found && found.key.revokedAt === null) {
          caller = { key: found.key, tenant: found.tenant };
          known.remember(hash, caller, clock());
        } else if (found) {
          known.forgetKey(found.key.id);
        }
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        if (memoryMs !== undefined && remembered) {
          // Checked longer ago than the route takes on trust: still the best answer while the store is down.
          request.log.warn({ err }, "authentication could not reach the store; the key as last checked");
          caller = remembered;
        } else {
          if (settings.onStoreFault !== "degrade") throw err;
          request.log.warn({ err }, "authentication could not reach the store");
          // The handler answers the degraded verdict, signed for the tenant last seen with this key if any.
          request.storeFault = true;
          caller = remembered;
        }
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
