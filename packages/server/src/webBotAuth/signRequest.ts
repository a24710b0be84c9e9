import { constants, type KeyObject, sign } from "node:crypto";
import { type Item, type Parameters, serializeInnerList, serializeItem } from "structured-headers";
import type { SignatureAlgorithm } from "./messageSignature.js";
import { signatureBase } from "./signatureBase.js";

export interface SignOptions {
  label?: string;
  /** Covered components, e.g. `["@authority", ["signature-agent", { key: "agent1" }]]`. */
  components: (string | [string, Record<string, string | boolean>])[];
  keyid: string;
  alg: SignatureAlgorithm;
  created: number;
  expires: number;
  nonce?: string;
  tag?: string;
  /** Whether to write alg into Signature-Input (Web Bot Auth senders commonly do). */
  includeAlg?: boolean;
}

/**
 * Signs a request the way a Web Bot Auth agent does (RFC 9421 §3.1) and returns the two header
 * values to add. The reference signer for the step-up exchange, the evaluation traffic and tests;
 * it builds the base with the same code the verifier uses, which the public vectors pin down.
 */
export function signRequest(
  headers: Readonly<Record<string, string>>,
  key: KeyObject,
  o: SignOptions,
): { signature: string; signatureInput: string } {
  const label = o.label ?? "sig1";
  const items: Item[] = o.components.map((c) =>
    typeof c === "string" ? [c, new Map()] : [c[0], new Map(Object.entries(c[1]))],
  );
  const params: Parameters = new Map<string, string | number>([
    ["created", o.created],
    ["keyid", o.keyid],
  ]);
  if (o.includeAlg !== false) params.set("alg", o.alg);
  params.set("expires", o.expires);
  if (o.nonce !== undefined) params.set("nonce", o.nonce);
  params.set("tag", o.tag ?? "web-bot-auth");
  const inner = serializeInnerList([items, params]);
  const base = signatureBase(
    { headers },
    {
      label,
      components: items.map((i) => ({ name: i[0] as string, params: i[1], serialized: serializeItem(i) })),
      params: {},
      signatureParams: inner,
      signature: Buffer.alloc(0),
    },
  );
  if (!base.ok) throw new Error(`cannot sign: ${base.why}`);
  const data = Buffer.from(base.base, "utf8");
  const bytes =
    o.alg === "ed25519"
      ? sign(null, data, key)
      : sign("sha512", data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 });
  return { signature: `${label}=:${bytes.toString("base64")}:`, signatureInput: `${label}=${inner}` };
}
