import {
  type BareItem,
  type InnerList,
  isInnerList,
  serializeInnerList,
  serializeItem,
  Token,
} from "structured-headers";
import { parseDictionary } from "./structuredFields.js";

/**
 * RFC 9421 HTTP Message Signatures, the part Web Bot Auth needs: reading Signature and
 * Signature-Input with structured-headers (RFC 8941/9651). signatureBase.ts builds the base and
 * agentKeys.ts checks the bytes.
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
/**
 * Bounds on what one request may ask Warden to check: every signature and every component costs a
 * signature base; real agents send one or two signatures over a handful of components.
 */
export const MAX_SIGNATURES = 8;
export const MAX_COMPONENTS = 24;

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
  if (inputs.size > MAX_SIGNATURES) {
    return { ok: false, why: `more than ${MAX_SIGNATURES} signatures (an agent sends one or two)` };
  }
  const signatures: MessageSignature[] = [];
  for (const [label, member] of inputs) {
    const sig = sigs.get(label);
    if (!isInnerList(member)) return { ok: false, why: `Signature-Input ${label} is not an inner list` };
    if (!sig || isInnerList(sig) || !(sig[0] instanceof ArrayBuffer)) {
      return { ok: false, why: `no byte-sequence Signature for label ${label}` };
    }
    const [items, params] = member as InnerList;
    if (items.length > MAX_COMPONENTS) {
      return { ok: false, why: `signature ${label} covers more than ${MAX_COMPONENTS} components` };
    }
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
