import { isInnerList } from "structured-headers";
import { type AgentHosts, hostListed, signedHost } from "./agentHosts.js";
import { agentOrigin, type SignatureCheck } from "./agentKeys.js";
import {
  type MessageSignature,
  readSignatures,
  type SignatureAlgorithm,
  type SignedRequest,
  SUPPORTED_ALGORITHMS,
} from "./messageSignature.js";
import { signatureBase } from "./signatureBase.js";
import { parseDictionary, parseItem } from "./structuredFields.js";

/** The Web Bot Auth tag (draft-meunier-web-bot-auth-architecture). */
export const WEB_BOT_AUTH_TAG = "web-bot-auth";

/**
 * The longest created-to-expires window accepted by default: the Web Bot Auth architecture draft
 * recommends that a signature expire within 24 hours. A longer window is a replay window.
 */
export const DEFAULT_MAX_SIGNATURE_VALIDITY_SECONDS = 86_400;

/** A key Warden knows: whose it is and where it is published. */
export interface KnownAgentKey {
  operator: string;
  /** The operator's registered Signature-Agent URL. */
  signatureAgent: string;
  alg: SignatureAlgorithm;
  check: SignatureCheck;
  /**
   * The longest created-to-expires window accepted from this key (the registry sets
   * WARDEN_AGENT_SIGNATURE_MAX_VALIDITY_SECONDS); DEFAULT_MAX_SIGNATURE_VALIDITY_SECONDS when unset.
   */
  maxValiditySeconds?: number;
}

/** A key that more than one operator claims: it identifies none of them (agentRegistry.ts). */
export interface AmbiguousAgentKey {
  ambiguous: true;
}

export type KeyLookup = (keyid: string) => KnownAgentKey | AmbiguousAgentKey | undefined;

/**
 * Three outcomes kept apart (plus "absent"): verified (a known key signed it), invalid (a signature
 * is there and fails: a strong sign of forgery or replay), unverified (not a Web Bot Auth signature,
 * a key nobody knows, or a request that cannot be checked from what was forwarded).
 */
export type AgentIdentity =
  | { outcome: "absent" }
  | { outcome: "unverified"; why: string; keyid?: string; signatureAgent?: string }
  | { outcome: "invalid"; why: string; keyid?: string; signatureAgent?: string }
  | {
      outcome: "verified";
      keyid: string;
      operator: string;
      signatureAgent?: string;
      alg: SignatureAlgorithm;
      created: number;
      expires: number;
      nonce?: string;
    };

export interface VerifyAgentOptions {
  /** Unix seconds. */
  now: number;
  /** Tolerated clock difference for created/expires, in seconds. */
  skewSeconds: number;
  /** Step-up: the signature must carry this nonce and be made with this key. */
  require?: { nonce: string; keyid?: string };
  /** The tenant's hosts (policy webBotAuthHosts): a signature made for another host is invalid. */
  hosts?: AgentHosts | undefined;
}

/** The Signature-Agent URL a signature covers: the dictionary member it names, or the legacy sf-string. */
function signatureAgentOf(
  req: SignedRequest,
  sig: MessageSignature,
): { covered: boolean; url?: string; malformed?: string } {
  const header = req.headers["signature-agent"];
  const component = sig.components.find((c) => c.name === "signature-agent");
  if (header === undefined) return { covered: component !== undefined };
  if (!component) return { covered: false };
  const member = component.params.get("key");
  try {
    if (typeof member === "string") {
      const value = parseDictionary(header).get(member);
      if (!value || isInnerList(value) || typeof value[0] !== "string") {
        return { covered: true, malformed: `Signature-Agent has no string member ${member}` };
      }
      return { covered: true, url: value[0] };
    }
    const [value] = parseItem(header);
    if (typeof value !== "string") return { covered: true, malformed: "Signature-Agent is not a string" };
    return { covered: true, url: value };
  } catch {
    return { covered: true, malformed: "Signature-Agent does not parse as a structured field" };
  }
}

function checkOne(req: SignedRequest, sig: MessageSignature, lookup: KeyLookup, o: VerifyAgentOptions) {
  const { keyid, created, expires, alg, nonce } = sig.params;
  const agent = signatureAgentOf(req, sig);
  const ids = {
    ...(keyid === undefined ? {} : { keyid }),
    ...(agent.url ? { signatureAgent: agent.url } : {}),
  };
  const invalid = (why: string): AgentIdentity => ({ outcome: "invalid", why, ...ids });
  const unverified = (why: string): AgentIdentity => ({ outcome: "unverified", why, ...ids });

  if (alg !== undefined && !SUPPORTED_ALGORITHMS.includes(alg as SignatureAlgorithm)) {
    return invalid(`algorithm ${alg} is not accepted (Ed25519 or RSA-PSS-SHA512 only)`);
  }
  if (sig.components.length === 0) return invalid("the signature covers no components");
  if (!sig.components.some((c) => c.name === "@authority" || c.name === "@target-uri")) {
    return invalid("the signature covers neither @authority nor @target-uri");
  }
  if (req.headers["signature-agent"] !== undefined && !agent.covered) {
    return invalid("Signature-Agent is sent but not covered by the signature");
  }
  if (agent.malformed) return invalid(agent.malformed);
  if (keyid === undefined) return invalid("the signature has no keyid");
  if (created === undefined || expires === undefined) return invalid("created and expires are required");
  if (expires <= created) return invalid("expires is not later than created");
  if (created > o.now + o.skewSeconds) return invalid("created is in the future");
  if (o.now > expires + o.skewSeconds) return invalid("the signature has expired");
  if (o.hosts) {
    // Unforwarded or unreadable: the signature base below cannot be built either (unverified or invalid).
    const host = signedHost(req.headers);
    if (host !== undefined && !hostListed(o.hosts, host)) {
      return invalid(`the signature was made for ${JSON.stringify(host)}, not one of the tenant's hosts`);
    }
  }
  if (o.require && nonce !== o.require.nonce)
    return invalid("the signature does not carry the step-up nonce");
  if (o.require?.keyid !== undefined && keyid !== o.require.keyid) {
    return invalid("the step-up was signed with another key than the original request");
  }

  const known = lookup(keyid);
  if (!known) return unverified("the key is not registered with Warden");
  if ("ambiguous" in known) {
    return unverified("the key is registered for more than one operator, so it identifies none");
  }
  const maxValidity = known.maxValiditySeconds ?? DEFAULT_MAX_SIGNATURE_VALIDITY_SECONDS;
  if (expires - created > maxValidity) {
    return invalid(
      `the signature is valid for ${expires - created} s, longer than the ${maxValidity} s Warden accepts`,
    );
  }
  if (agent.url !== undefined && agentOrigin(agent.url) !== agentOrigin(known.signatureAgent)) {
    return unverified("the key is not registered for that Signature-Agent");
  }
  if (alg !== undefined && alg !== known.alg) return invalid(`alg ${alg} does not match the registered key`);

  const base = signatureBase(req, sig);
  if (!base.ok) return base.unknowable ? unverified(base.why) : invalid(base.why);
  if (!known.check(Buffer.from(base.base, "utf8"), sig.signature)) {
    return invalid("the signature does not match the request");
  }
  return {
    outcome: "verified",
    keyid,
    operator: known.operator,
    ...(agent.url ? { signatureAgent: agent.url } : {}),
    alg: known.alg,
    created,
    expires,
    ...(nonce === undefined ? {} : { nonce }),
  } satisfies AgentIdentity;
}

const RANK: Record<AgentIdentity["outcome"], number> = { verified: 3, invalid: 2, unverified: 1, absent: 0 };

/**
 * Checks the Web Bot Auth signatures of a forwarded request. Signatures with another tag are plain
 * RFC 9421 signatures and identify no agent. Of several Web Bot Auth signatures the best outcome
 * counts (one verified signature is enough; otherwise a failing one makes the request invalid).
 */
export function verifyAgent(req: SignedRequest, lookup: KeyLookup, o: VerifyAgentOptions): AgentIdentity {
  const parsed = readSignatures(req);
  if (!parsed.ok) return { outcome: "invalid", why: parsed.why };
  if (parsed.signatures.length === 0) return { outcome: "absent" };
  const profiled = parsed.signatures.filter((s) => s.params.tag === WEB_BOT_AUTH_TAG);
  if (profiled.length === 0) {
    return { outcome: "unverified", why: `the request is signed, but not with tag "${WEB_BOT_AUTH_TAG}"` };
  }
  let best: AgentIdentity = { outcome: "absent" };
  for (const sig of profiled) {
    const result = checkOne(req, sig, lookup, o);
    if (RANK[result.outcome] > RANK[best.outcome]) best = result;
    if (best.outcome === "verified") break;
  }
  return best;
}
