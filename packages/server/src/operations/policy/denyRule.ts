import type { CampaignMark } from "../../domain.js";
import { asciiDomain } from "../../lib/domainName.js";
import { compilePolicy } from "../../policy/tenantPolicy.js";
import { fullyTruncated, readNetwork } from "../verify/signals/ip.js";

/** The deny lists a console rule appends to, each matching one mark events record. */
export const RULE_LISTS = [
  "environments",
  "tlsFingerprints",
  "userAgents",
  "shapes",
  "emailDomains",
  "networks",
] as const;
export type RuleList = (typeof RULE_LISTS)[number];

export const MARK_OF_LIST: Readonly<Record<RuleList, CampaignMark>> = {
  environments: "environment",
  tlsFingerprints: "tls",
  userAgents: "userAgent",
  shapes: "shape",
  emailDomains: "emailDomain",
  networks: "network",
};

/** The list that denies a mark's value, when there is one. */
export function listOfMark(kind: CampaignMark): RuleList | undefined {
  return RULE_LISTS.find((list) => MARK_OF_LIST[list] === kind);
}

export type RuleCheck = { ok: true; value: string } | { ok: false; message: string };

/**
 * A deny rule's value as the list keeps it, or why it cannot be one: what the policy document accepts
 * for the list and, for a network, exactly a network as events record it (a /24 or /48), so its
 * what-if counts what the rule would deny.
 */
export function checkRule(list: RuleList, value: string): RuleCheck {
  let kept = value;
  if (list === "networks") {
    const network = readNetwork(value);
    if (!network || !fullyTruncated(network) || network.text !== value.trim()) {
      return {
        ok: false,
        message: `${JSON.stringify(value)} is not a network as events record it (a /24 or /48, e.g. 203.0.113.0/24); a wider range is set with warden policy set.`,
      };
    }
    kept = network.text;
  }
  if (list === "emailDomains") kept = asciiDomain(value);
  const compiled = compilePolicy({ deny: { [list]: [kept] } }, "rule");
  if (!compiled.ok) return { ok: false, message: `Not a valid ${list} entry: ${compiled.errors.join("; ")}` };
  return { ok: true, value: kept };
}

/** Whether the document's deny list names the value already. */
export function denies(document: PolicyLists, list: RuleList, value: string): boolean {
  return (document.deny?.[list] ?? []).includes(value);
}

export type PolicyLists = Record<string, unknown> & { deny?: Partial<Record<RuleList, string[]>> };

/** The document with the value appended to its deny list (the rest as it was). */
export function withDenied(document: PolicyLists, list: RuleList, value: string): PolicyLists {
  const deny = document.deny ?? {};
  return { ...document, deny: { ...deny, [list]: [...(deny[list] ?? []), value] } };
}
