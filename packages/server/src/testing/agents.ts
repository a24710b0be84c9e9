import { generateKeyPairSync, type KeyObject } from "node:crypto";
import type { Store } from "../store/interfaces.js";
import { parseAgentJwks } from "../webBotAuth/agentKeys.js";
import { signRequest } from "../webBotAuth/signRequest.js";

export interface TestAgent {
  operator: string;
  signatureAgent: string;
  privateKey: KeyObject;
  /** JWK thumbprint of the public key: the Web Bot Auth keyid. */
  keyid: string;
}

/** Registers an operator with a fresh Ed25519 key, as `warden agent add --jwks` would. */
export async function registerAgent(
  store: Store,
  operator: string,
  signatureAgent: string,
): Promise<TestAgent> {
  const pair = generateKeyPairSync("ed25519");
  const parsed = await parseAgentJwks({ keys: [pair.publicKey.export({ format: "jwk" })] });
  if (!parsed.ok || !parsed.keys[0]) throw new Error(parsed.ok ? "no key" : parsed.message);
  await store.agents.put({
    operator,
    signatureAgent,
    keys: parsed.keys,
    fetchDirectory: false,
    createdAt: 1,
    updatedAt: 1,
  });
  return { operator, signatureAgent, privateKey: pair.privateKey, keyid: parsed.keys[0].thumbprint };
}

/**
 * The headers of a request `agent` signs now (dictionary Signature-Agent, @authority covered).
 * `keyid` and `privateKey` may be overridden to sign as someone else; `flip` corrupts the signature.
 */
export function agentRequestHeaders(
  agent: TestAgent,
  o: {
    nonce?: string;
    created?: number;
    keyid?: string;
    privateKey?: KeyObject;
    flip?: boolean;
    extra?: Record<string, string>;
  } = {},
): Record<string, string> {
  const created = o.created ?? Math.floor(Date.now() / 1000) - 5;
  const headers = { host: "app.example", "signature-agent": `agent1="${agent.signatureAgent}"`, ...o.extra };
  const signed = signRequest(headers, o.privateKey ?? agent.privateKey, {
    components: ["@authority", ["signature-agent", { key: "agent1" }]],
    keyid: o.keyid ?? agent.keyid,
    alg: "ed25519",
    created,
    expires: created + 300,
    nonce: o.nonce ?? "bm9uY2U",
  });
  let signature = signed.signature;
  if (o.flip) {
    const bytes = Buffer.from(signature.slice("sig1=:".length, -1), "base64");
    bytes[0] = (bytes[0] ?? 0) ^ 0xff;
    signature = `sig1=:${bytes.toString("base64")}:`;
  }
  return { ...headers, signature, "signature-input": signed.signatureInput };
}
