import { emailHash } from "../operations/verify/signals/email.js";
import { fullyTruncated, readNetwork } from "../operations/verify/signals/ip.js";
import type { ErasureSubject, RemovedRows, Store } from "../store/interfaces.js";

/** How an operator names the person whose data is erased: exactly one of these. */
export interface ErasureRequest {
  email?: string | undefined;
  emailSha256?: string | undefined;
  ip?: string | undefined;
  session?: string | undefined;
  eventId?: string | undefined;
}

/**
 * The subject as events store it: an address hashed as verify hashes it (SHA-256 of the trimmed,
 * lower-cased address), an address or network truncated to the /24 or /48 verify keeps. A string
 * says what is wrong with the request.
 */
export function erasureSubject(req: ErasureRequest): ErasureSubject | string {
  const given = Object.entries(req).filter(([, v]) => v !== undefined);
  if (given.length !== 1) return "give exactly one of --email, --email-sha256, --ip, --session or --event";
  if (req.email !== undefined) {
    if (!/^[^\s@]+@[^\s@]+$/.test(req.email.trim()))
      return `--email must be an email address, got "${req.email}"`;
    return { emailHash: emailHash(req.email) };
  }
  if (req.emailSha256 !== undefined) {
    if (!/^[0-9a-f]{64}$/i.test(req.emailSha256))
      return "--email-sha256 must be 64 hexadecimal digits (the SHA-256 of the trimmed, lower-cased address)";
    return { emailHash: req.emailSha256.toLowerCase() };
  }
  if (req.ip !== undefined) {
    const network = readNetwork(req.ip);
    if (network === undefined) return `--ip must be an IPv4 or IPv6 address or network, got "${req.ip}"`;
    // Events keep exactly the /24 or /48: a wider network would match none of them.
    if (!fullyTruncated(network))
      return `--ip must be an address or a network no wider than /24 (IPv4) or /48 (IPv6), got "${req.ip}"`;
    return { network: network.text };
  }
  if (req.session !== undefined) {
    if (req.session === "") return "--session must not be empty";
    return { session: req.session };
  }
  if (req.eventId === "" || req.eventId === undefined) return "--event must not be empty";
  return { eventId: req.eventId };
}

/**
 * Erases one subject's data from one tenant (docs/security-model.md, "Erasure"): its events and
 * everything on them. Undefined for an unknown tenant.
 */
export async function eraseSubject(
  store: Store,
  tenantId: string,
  subject: ErasureSubject,
  signal?: AbortSignal,
): Promise<RemovedRows | undefined> {
  if (!(await store.tenants.get(tenantId))) return undefined;
  return store.removal.erase(tenantId, subject, signal);
}
