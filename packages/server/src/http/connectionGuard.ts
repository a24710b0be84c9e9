import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import ipaddr from "ipaddr.js";
import type { Config } from "../config.js";

/**
 * The source a client address counts as, for the connection limits below and the console's sign-in
 * limit: an IPv4 address itself (an IPv4-mapped IPv6 address as its IPv4 address), an IPv6 address
 * by its /64. A /64 is the least one host or subscriber is given (RFC 7421), and any address in it is
 * theirs to use, so counting by address would give one host 2^64 allowances. Text that is not an
 * address is its own source.
 */
export function clientSource(address: string): string {
  if (!address.includes(":")) return address;
  let parsed: ipaddr.IPv6;
  try {
    parsed = ipaddr.IPv6.parse(address);
  } catch {
    return address;
  }
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  return `${parsed.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(":")}::/64`;
}

/** WARDEN_MAX_CONNECTIONS, and WARDEN_MAX_CONNECTIONS_PER_ADDRESS (applied per source). */
export type ConnectionLimits = Pick<Config, "maxConnections" | "maxConnectionsPerAddress">;

interface Held {
  readonly socket: Socket;
  readonly source: Source;
  /** Requests whose headers arrived and whose response is not done. */
  inFlight: number;
  /** The latest of them, to tell a body still arriving from one being handled. */
  request: IncomingMessage | undefined;
  gone: boolean;
}

interface Source {
  readonly key: string;
  count: number;
  /** Its sockets with no request in flight, least recently active first. */
  readonly waiting: Map<Socket, Held>;
}

/** How many of the oldest busy sockets are looked at for a stalled one (a bound on the work per socket). */
const STALLED_SCAN = 256;

/**
 * Who holds the sockets, and who gives one up when there is no room. A socket costs a descriptor
 * whether or not it carries requests: slow-header connections from five addresses once held every
 * slot and verify went unanswered (and a host picks any address of its IPv6 /64). So:
 * - a socket is waiting while no request is in flight on it: just connected, its headers still
 *   arriving, or idle between keep-alive requests. Waiting sockets give way to new ones;
 * - a new socket from a source (clientSource) that holds `maxConnectionsPerAddress` closes that
 *   source's least recently active waiting socket, or is closed itself when every socket of the
 *   source carries a request;
 * - a new socket when the server holds `maxConnections` closes, in this order, its own source's least
 *   recently active waiting socket, anyone's, or the oldest busy socket that is stalled (its request's
 *   body is still arriving, or its client does not read the answer); only when every socket carries a
 *   live request is the new one closed.
 * A caller that connects and sends its request at once is answered however many idle or trickling
 * sockets others hold, and a source that floods pays with its own sockets first. Nothing is closed
 * here for being slow: Node's headersTimeout (from the connection, for a socket that sends nothing)
 * and requestTimeout do that (app.ts).
 */
export function guardConnections(server: Server, limits: ConnectionLimits): void {
  const sources = new Map<string, Source>();
  const held = new Map<Socket, Held>();
  /** Sockets with no request in flight, least recently active first. */
  const waiting = new Map<Socket, Held>();
  /** Sockets with a request in flight, by when their current request began. */
  const busy = new Map<Socket, Held>();

  const forget = (h: Held) => {
    if (h.gone) return;
    h.gone = true;
    held.delete(h.socket);
    waiting.delete(h.socket);
    busy.delete(h.socket);
    h.source.waiting.delete(h.socket);
    if (--h.source.count === 0) sources.delete(h.source.key);
  };
  /** Moves a socket to the recent end of the waiting lists (Maps keep insertion order). */
  const toWaiting = (h: Held) => {
    busy.delete(h.socket);
    waiting.delete(h.socket);
    waiting.set(h.socket, h);
    h.source.waiting.delete(h.socket);
    h.source.waiting.set(h.socket, h);
  };
  const toBusy = (h: Held) => {
    waiting.delete(h.socket);
    h.source.waiting.delete(h.socket);
    busy.delete(h.socket);
    busy.set(h.socket, h);
  };
  const oldest = (m: Map<Socket, Held> | undefined): Held | undefined => m?.values().next().value;
  const stalled = (): Held | undefined => {
    let looked = 0;
    for (const h of busy.values()) {
      if (h.request?.complete === false || h.socket.writableLength > 0) return h;
      if (++looked >= STALLED_SCAN) break;
    }
    return undefined;
  };

  server.on("connection", (socket: Socket) => {
    const key = clientSource(socket.remoteAddress ?? "");
    const mine = sources.get(key);
    const full = held.size >= limits.maxConnections;
    if (full || (mine !== undefined && mine.count >= limits.maxConnectionsPerAddress)) {
      const victim = oldest(mine?.waiting) ?? (full ? (oldest(waiting) ?? stalled()) : undefined);
      if (!victim) {
        socket.destroy();
        return;
      }
      forget(victim);
      victim.socket.destroy();
    }
    let source = sources.get(key);
    if (!source) {
      source = { key, count: 0, waiting: new Map() };
      sources.set(key, source);
    }
    source.count++;
    const h: Held = { socket, source, inFlight: 0, request: undefined, gone: false };
    held.set(socket, h);
    toWaiting(h);
    socket.once("close", () => forget(h));
  });

  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const h = held.get(request.socket);
    if (!h) return;
    h.inFlight++;
    h.request = request;
    toBusy(h);
    response.once("close", () => {
      if (h.gone || --h.inFlight > 0) return;
      h.request = undefined;
      toWaiting(h);
    });
  });
}
