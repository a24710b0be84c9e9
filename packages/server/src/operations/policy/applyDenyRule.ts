import type { ErrorCode } from "../../errors.js";
import type { TenantPolicies } from "../../policy/tenantPolicies.js";
import { compilePolicy } from "../../policy/tenantPolicy.js";
import type { Store } from "../../store/interfaces.js";
import { checkRule, denies, type PolicyLists, withDenied } from "./denyRule.js";
import type { DenyRuleAnswer, DenyRuleRequest } from "./schema.js";

export interface DenyRuleDeps {
  store: Store;
  clock: () => number;
  /** This process's compiled policies: dropped after a change, so verify here applies it at once. */
  tenantPolicies: Pick<TenantPolicies, "forget">;
}

export type DenyRuleResult =
  | { ok: true; answer: DenyRuleAnswer }
  | { ok: false; code: ErrorCode; message: string };

/** How a stored version is named on events and in answers. */
export const versionLabel = (version: number) => (version === 0 ? "default" : `v${version}`);

/** Tries a change made from a version that another one overtook, before answering policy_changed. */
const ATTEMPTS = 3;

/**
 * Appends one value to one of the tenant's deny lists as the policy's next version (the rest of the
 * document unchanged), for an operator who looked at the campaign and its what-if. The change is made
 * from the current version and stored only while that version is still the current one, so a
 * concurrent `warden policy set` or rule is never overwritten. With `basedOn`, the version the
 * operator's what-if was read under, a policy changed since is refused (409 policy_changed) rather
 * than changed unseen. A value the list names already stores nothing (added: false).
 */
export async function applyDenyRule(
  deps: DenyRuleDeps,
  tenantId: string,
  req: DenyRuleRequest,
): Promise<DenyRuleResult> {
  const rule = checkRule(req.list, req.value);
  if (!rule.ok) return { ok: false, code: "invalid_rule", message: rule.message };
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await deps.store.policies.current(tenantId);
    const version = current?.version ?? 0;
    if (req.basedOn !== undefined && req.basedOn !== versionLabel(version)) return changed(req.basedOn);
    const document = current ? (JSON.parse(current.document) as PolicyLists) : {};
    const answer = { tenantId, list: req.list, value: rule.value, previousVersion: versionLabel(version) };
    if (denies(document, req.list, rule.value)) {
      return { ok: true, answer: { ...answer, added: false, policyVersion: versionLabel(version) } };
    }
    const next = withDenied(document, req.list, rule.value);
    const compiled = compilePolicy(next, "next");
    if (!compiled.ok) {
      return {
        ok: false,
        code: "invalid_rule",
        message: `The tenant's policy with this rule would not be valid: ${compiled.errors.join("; ")}`,
      };
    }
    const stored = await deps.store.policies.putIfCurrent(
      tenantId,
      JSON.stringify(next),
      version,
      deps.clock(),
    );
    if (stored !== undefined) {
      deps.tenantPolicies.forget(tenantId);
      return { ok: true, answer: { ...answer, added: true, policyVersion: versionLabel(stored) } };
    }
    if (req.basedOn !== undefined) return changed(req.basedOn);
  }
  return { ok: false, code: "policy_changed", message: "The tenant's policy kept changing: try again." };
}

function changed(basedOn: string): DenyRuleResult {
  return {
    ok: false,
    code: "policy_changed",
    message: `The tenant's policy is no longer ${basedOn} (another version was stored since): look at the what-if again.`,
  };
}
