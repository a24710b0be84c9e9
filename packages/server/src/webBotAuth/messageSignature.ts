import { constants, type KeyObject, verify as verifyBytes } from "node:crypto";
import { httpbis } from "http-message-signatures";
import {
  type BareItem,
  type InnerList,
  isInnerList,
  parseDictionary,
  serializeInnerList,
  serializeItem,
  Token,
} from "structured-headers";

/**
 * RFC 9421 HTTP Message Signatures, the part Web Bot Auth needs: reading Signature and
 * Signature-Input, building the signature base, and checking the bytes with an Ed25519 or
 * RSA-PSS-SHA512 public key. The signature base comes from http-message-signatures (ISC), which
 * reproduces every vector in shared/vectors; parsing uses structured-headers (RFC 8941/9651).
 */

export type SignatureAlgorithm = "ed25519" | "rsa-pss-sha512";
export const SUPPORTED_ALGORITHMS: readonly SignatureAlgorithm[] = ["ed25519", "rsa-pss-sha512"];

/** The request as the integration forwarded it: lower-cased header names, multi-values joined. */
export interface SignedRequest {
  headers: Readonly<Record<string, string>>;
}

/** One signature from Signature-Input with its bytes from Signature. */
export interface MessageSignature {
  label: string;
  /** Covered components as serialised in the base, e.g. `"@authority"`, `"signature-agent";key="agent2"`. */
  components: { name: string; params: ReadonlyMap<string, BareItem>; serialized: string }[];
  params: {
    created?: number;
    expires?: number;
    keyid?: string;
    alg?: string;
    tag?: string;
    nonce?: string;
  };
  /** The inner list as it appears after `"@signature-params": ` in the base. */
  signatureParams: string;
  signature: Buffer;
}

export type ParseResult = { ok: true; signatures: MessageSignature[] } | { ok: false; why: string };

const stringParam = (v: BareItem | undefined): string | undefined =>
  typeof v === "string" ? v : v instanceof Token ? v.toString() : undefined;
const intParam = (v: BareItem | undefined): number | undefined =>
  typeof v === "number" && Number.isInteger(v) ? v : undefined;

/**
 * Every signature of the request. Empty when neither header is present; an error when they do not
 * parse as dictionaries or do not pair up (RFC 9421 §4.1, §4.2).
 */
export function readSignatures(req: SignedRequest): ParseResult {
  const inputHeader = req.headers["signature-input"];
  const signatureHeader = req.headers.signature;
  if (inputHeader === undefined && signatureHeader === undefined) return { ok: true, signatures: [] };
  if (inputHeader === undefined || signatureHeader === undefined) {
    return { ok: false, why: "Signature and Signature-Input must be sent together" };
  }
  let inputs: ReturnType<typeof parseDictionary>;
  let sigs: ReturnType<typeof parseDictionary>;
  try {
    inputs = parseDictionary(inputHeader);
    sigs = parseDictionary(signatureHeader);
  } catch {
    return { ok: false, why: "Signature or Signature-Input is not a structured-field dictionary" };
  }
  const signatures: MessageSignature[] = [];
  for (const [label, member] of inputs) {
    const sig = sigs.get(label);
    if (!isInnerList(member)) return { ok: false, why: `Signature-Input ${label} is not an inner list` };
    if (!sig || isInnerList(sig) || !(sig[0] instanceof ArrayBuffer)) {
      return { ok: false, why: `no byte-sequence Signature for label ${label}` };
    }
    const [items, params] = member as InnerList;
    const components: MessageSignature["components"] = [];
    for (const item of items) {
      if (typeof item[0] !== "string") return { ok: false, why: `component of ${label} is not a string` };
      components.push({ name: item[0], params: item[1], serialized: serializeItem(item) });
    }
    signatures.push({
      label,
      components,
      params: {
        ...optional("created", intParam(params.get("created"))),
        ...optional("expires", intParam(params.get("expires"))),
        ...optional("keyid", stringParam(params.get("keyid"))),
        ...optional("alg", stringParam(params.get("alg"))),
        ...optional("tag", stringParam(params.get("tag"))),
        ...optional("nonce", stringParam(params.get("nonce"))),
      },
      signatureParams: serializeInnerList(member as InnerList),
      signature: Buffer.from(sig[0]),
    });
  }
  return { ok: true, signatures };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/**
 * Derived components need the request line, which arrives as HTTP/2-style pseudo-headers inside
 * subject.headers (`:method`, `:scheme`, `:authority`, `:path`); @authority falls back to `host`.
 */
const DERIVED_NEEDS: Readonly<Record<string, readonly string[]>> = {
  "@method": [":method"],
  "@authority": [],
  "@scheme": [],
  "@target-uri": [":path"],
  "@path": [":path"],
  "@query": [":path"],
  "@request-target": [":path"],
  "@query-param": [":path"],
};

export type BaseResult = { ok: true; base: string } | { ok: false; why: string; unknowable?: boolean };

/**
 * The signature base of `sig` over `req` (RFC 9421 §2.5). `unknowable` marks a covered component the
 * integration did not forward (not a forgery: the request cannot be checked).
 */
export function signatureBase(req: SignedRequest, sig: MessageSignature): BaseResult {
  const h = req.headers;
  const authority = h[":authority"] ?? h.host;
  for (const c of sig.components) {
    if (c.params.has("req")) return { ok: false, why: `${c.serialized} refers to a request of a response` };
    if (!c.name.startsWith("@")) continue;
    const needs = DERIVED_NEEDS[c.name];
    if (!needs) return { ok: false, why: `unsupported derived component ${c.name}` };
    if (authority === undefined) {
      return { ok: false, why: `${c.name} needs the host header, which was not forwarded`, unknowable: true };
    }
    const missing = needs.find((name) => h[name] === undefined);
    if (missing) {
      return { ok: false, why: `${c.name} needs ${missing}, which was not forwarded`, unknowable: true };
    }
  }
  const url = `${h[":scheme"] ?? "https"}://${authority ?? "invalid"}${h[":path"] ?? "/"}`;
  try {
    const lines = httpbis.createSignatureBase(
      { fields: sig.components.map((c) => c.serialized) },
      { method: h[":method"] ?? "GET", url, headers: { ...h } },
    );
    lines.push(['"@signature-params"', [sig.signatureParams]]);
    return { ok: true, base: httpbis.formatSignatureBase(lines) };
  } catch (err) {
    // A covered header that is absent, or a `key` that is not in the dictionary (RFC 9421 §2.5 step 2).
    return { ok: false, why: err instanceof Error ? err.message : "signature base could not be built" };
  }
}

/** Checks the signature bytes over `base` with the key, for the algorithm the key is registered for. */
export function checkSignatureBytes(
  base: string,
  signature: Buffer,
  key: KeyObject,
  alg: SignatureAlgorithm,
): boolean {
  const data = Buffer.from(base, "utf8");
  try {
    if (alg === "ed25519") return verifyBytes(null, data, key, signature);
    return verifyBytes(
      "sha512",
      data,
      { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 },
      signature,
    );
  } catch {
    return false;
  }
}
