import { randomBytes } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { verifyAgent, WEB_BOT_AUTH_TAG } from "../../../../webBotAuth/verifyAgent.js";
import { normaliseHeaders } from "../../../verify/signals/browserHeaders.js";
import { type Method, refuse } from "../../method.js";

/** The agent identity recorded with the event by verify (signals.agent), if the attempt was signed. */
function recordedAgent(
  signals: Record<string, unknown>,
): { outcome: string; keyid: string | undefined } | undefined {
  const a = signals.agent as { outcome?: unknown; keyid?: unknown } | null | undefined;
  if (!a || typeof a.outcome !== "string") return undefined;
  return { outcome: a.outcome, keyid: typeof a.keyid === "string" ? a.keyid : undefined };
}

/**
 * web_bot_auth_stepup: the agent signs a request with the key of the original attempt, with a nonce
 * sealed at issue in its Signature-Input, and hands over the signed request's headers as the proof;
 * it is checked with the same verifier as verify, requiring that nonce and that key.
 */
export const webBotAuthStepUpMethod: Method = {
  name: "web_bot_auth_stepup",
  proof: {
    names: ["web_bot_auth"],
    claimsUnnamed: (proof) => proof.headers !== undefined,
    form: "{ method: web_bot_auth, headers }",
    members: {
      headers: Type.Optional(
        Type.Record(Type.String(), Type.String({ maxLength: 8192 }), {
          description: "web_bot_auth_stepup: the signed request's headers.",
        }),
      ),
    },
  },
  // Step-up proves the key that signed the attempt: without a recorded key there is nothing to
  // prove, and any registered operator's signature would clear it.
  issuable({ event, policy }) {
    const agent = recordedAgent(event.signals);
    return agent?.keyid !== undefined && (agent.outcome === "verified" || policy.webBotAuthStepUp);
  },
  seal({ event }) {
    const nonce = randomBytes(32).toString("base64");
    return {
      difficulty: null,
      seed: nonce,
      instructions: {
        type: "web_bot_auth",
        tag: WEB_BOT_AUTH_TAG,
        nonce,
        keyid: recordedAgent(event.signals)?.keyid ?? "",
        components: ["@authority", "signature-agent"],
        steps:
          'Sign a request with the same key (keyid) as the original attempt: Signature-Input with nonce set to this nonce, tag "web-bot-auth", created and expires, covering @authority and signature-agent (when sent); then complete with proof { method: "web_bot_auth", headers: { host, signature-agent, signature, signature-input } }.',
      },
    };
  },
  async check({ deps, tenantId, challenge: c, proof, now }) {
    const keyid = typeof c.instructions.keyid === "string" ? c.instructions.keyid : "";
    // A step-up issued before a key was required names none: no signature can prove it.
    if (keyid === "") {
      return refuse(
        "invalid_challenge_proof",
        "This step-up names no key to prove; issue a fresh challenge.",
      );
    }
    // Its `headers` member, whose shape the request schema checked (members, above).
    const headers = proof.headers as Record<string, string> | undefined;
    const result = verifyAgent({ headers: normaliseHeaders(headers) ?? {} }, deps.agentKeys, {
      now: Math.floor(now / 1000),
      skewSeconds: deps.signatureSkewSeconds,
      require: { nonce: c.seed ?? "", keyid },
      hosts: (await deps.tenantPolicies.get(tenantId)).webBotAuthHosts,
    });
    if (result.outcome !== "verified") {
      return refuse(
        "invalid_challenge_proof",
        `The Web Bot Auth proof was not accepted (${result.outcome === "absent" ? "no signature" : result.why}).`,
      );
    }
    return { ok: true };
  },
};
