import type { AgentIdentity } from "../../../webBotAuth/verifyAgent.js";
import type { ReasonCategory } from "../reasonCodes.js";
import type { Finding } from "./findings.js";
import type { Signal } from "./signal.js";

/**
 * The Web Bot Auth outcome as evidence. A verified signature is a declared, accountable agent: it
 * explains automation evidence rather than adding to it. An invalid one is a strong sign of a forged
 * or replayed agent; an unverified one is an agent nobody can vouch for.
 */
export function agentSignatureFindings(
  id: AgentIdentity,
  weights: { verified: number; invalid: number; unverified: number },
): Finding[] {
  switch (id.outcome) {
    case "absent":
      return [];
    case "verified":
      return [
        {
          id: "agent_verified",
          logOdds: weights.verified,
          reason: `The request carries a valid Web Bot Auth signature by ${id.operator}'s registered key${id.signatureAgent ? ` (${id.signatureAgent})` : ""}.`,
        },
      ];
    case "invalid":
      return [
        {
          id: "agent_signature_invalid",
          logOdds: weights.invalid,
          reason: `A Web Bot Auth signature is present but fails (${id.why}): a sign of a forged or replayed agent.`,
          automation: true,
        },
      ];
    case "unverified":
      return [
        {
          id: "agent_signature_unverified",
          logOdds: weights.unverified,
          reason: `The request is signed as an agent, but Warden cannot verify it (${id.why}).`,
          automation: true,
        },
      ];
  }
}

/** The Web Bot Auth signature (webBotAuth/verifyAgent.ts), verified before any signal runs. */
/** The reason codes of this signal's findings, with their category. */
const CODES = {
  agent_verified: "agent",
  agent_signature_invalid: "agent",
  agent_signature_unverified: "agent",
} as const satisfies Record<string, ReasonCategory>;

export const agentSignatureSignal: Signal<keyof typeof CODES> = {
  name: "Web Bot Auth signature",
  codes: CODES,
  findings: ({ agent, model: { weights: w } }) =>
    agentSignatureFindings(agent, {
      verified: w.agentVerified,
      invalid: w.agentInvalid,
      unverified: w.agentUnverified,
    }),
};
