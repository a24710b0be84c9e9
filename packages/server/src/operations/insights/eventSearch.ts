import { ApiError } from "../../errors.js";
import type { EventListFilter } from "../../store/interfaces.js";
import { fullyTruncated, readNetwork } from "../verify/signals/ip.js";
import { scopeOf } from "./readRoute.js";
import type { EventsQuery } from "./schema.js";

/**
 * The events a list asks for (GET /v1/events and its CSV): the period and action, and what finds a
 * person. An email is searched by its hash, lower-cased as verify stores it; an address or a network
 * by the truncated network verify stores (an address's /24 or /48), so a full address is never
 * compared with anything nor kept. A network wider than that is 400 invalid_query: events keep only
 * their /24 (/48), which a wider one would match only in part.
 */
export function eventFilterOf(q: EventsQuery, now: number): EventListFilter {
  const filter: EventListFilter = scopeOf(q, now);
  if (q.session !== undefined) filter.session = q.session;
  if (q.decision !== undefined) filter.decision = q.decision;
  if (q.actorType !== undefined) filter.actorType = q.actorType;
  if (q.emailHash !== undefined) filter.emailHash = q.emailHash.toLowerCase();
  if (q.network !== undefined) filter.network = networkOf(q.network);
  if (q.reasonCode !== undefined) filter.reasonCode = q.reasonCode;
  if (q.degraded !== undefined) filter.degraded = q.degraded === "true";
  return filter;
}

function networkOf(text: string): string {
  const network = readNetwork(text);
  if (!network) throw new ApiError("invalid_query", "network is not an IP address or network.");
  if (!fullyTruncated(network)) {
    throw new ApiError(
      "invalid_query",
      "network must be an address or a network no wider than /24 (IPv4) or /48 (IPv6): events keep only that.",
    );
  }
  return network.text;
}
