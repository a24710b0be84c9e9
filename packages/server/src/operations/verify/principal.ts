import type { AgentIdentity } from "../../webBotAuth/verifyAgent.js";
import type { Verdict } from "./schema.js";

/**
 * Attribution, never authorization (docs/api.md#agent-identity-web-bot-auth). `resolved` is true only when a
 * cryptographic basis established who is behind the attempt: a verified Web Bot Auth signature names
 * its operator. A business email domain (raw address, not free mail, not disposable) names the
 * organisation the attempt claims, as `onBehalfOf` with basis email_domain, but an unverified address
 * does not resolve anyone. Empty strings and an empty list mean "not known".
 */
export function principalFor(agent: AgentIdentity, businessDomain: string | undefined): Verdict["principal"] {
  const identityBasis: string[] = [];
  let operator = "";
  if (agent.outcome === "verified") {
    identityBasis.push("web_bot_auth");
    operator = agent.operator;
  }
  if (businessDomain) identityBasis.push("email_domain");
  return {
    resolved: agent.outcome === "verified",
    operator,
    onBehalfOf: businessDomain ?? "",
    identityBasis,
  };
}
