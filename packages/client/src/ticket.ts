import { jwtVerify, SignJWT } from "jose";
import { stableJson } from "./stableJson.js";

/**
 * The challenge ticket: what a gate hands the page with its 428 (the event to challenge, the session
 * it binds, the email hash the re-verify must repeat, and whatever of the pending form the app wants
 * back), signed with the integrator's secret (HS256). The page carries it to the challenge routes and
 * back with the re-submitted form, so the server keeps no pending state, and the page cannot swap in
 * another event, session or form. It is signed, not encrypted: put nothing in `pending` the person
 * who filled the form may not read.
 */
export interface TicketClaims {
  eventId: string;
  session: string;
  action: string;
  emailSha256?: string;
  /** The address itself, for a gate with `rawEmail` (the person who typed it reads the ticket). */
  email?: string;
  pending?: Record<string, unknown>;
  /** formDigest of the form challenged: the clear resumes that form only. */
  form?: string;
}

const AUDIENCE = "warden-challenge-ticket";

function keyOf(secret: string): Uint8Array<ArrayBuffer> {
  if (secret.length < 32) throw new Error("ticketSecret must be at least 32 characters");
  return new TextEncoder().encode(secret);
}

export async function signTicket(secret: string, claims: TicketClaims, ttlSeconds = 900): Promise<string> {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: "HS256" })
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(keyOf(secret));
}

/** The ticket's claims, or undefined when it is forged, altered, expired or not a ticket. */
export async function readTicket(secret: string, ticket: unknown): Promise<TicketClaims | undefined> {
  if (typeof ticket !== "string" || ticket.length > 8192) return undefined;
  try {
    const { payload } = await jwtVerify(ticket, keyOf(secret), { algorithms: ["HS256"], audience: AUDIENCE });
    if (typeof payload.eventId !== "string" || typeof payload.session !== "string") return undefined;
    if (typeof payload.action !== "string") return undefined;
    const claims: TicketClaims = {
      eventId: payload.eventId,
      session: payload.session,
      action: payload.action,
    };
    if (typeof payload.emailSha256 === "string") claims.emailSha256 = payload.emailSha256;
    if (typeof payload.email === "string") claims.email = payload.email;
    if (typeof payload.form === "string") claims.form = payload.form;
    if (typeof payload.pending === "object" && payload.pending !== null)
      claims.pending = payload.pending as Record<string, unknown>;
    return claims;
  } catch {
    return undefined;
  }
}

/**
 * A digest of a form (its stable JSON): an HMAC keyed with the ticket secret, so that the ticket,
 * which the person reads, gives no hash of the form (a password field, say) to guess offline.
 */
export async function formDigest(secret: string, form: Record<string, unknown>): Promise<string> {
  const key = await globalThis.crypto.subtle.importKey(
    "raw",
    keyOf(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const text = new TextEncoder().encode(`warden-form-v1\n${stableJson(form)}`);
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, text));
  return btoa(String.fromCharCode(...mac))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}
