/**
 * The `warden` command lines the console prints, in the CLI's own syntax
 * (packages/server/src/cli/policyCommands.ts). A server test runs what these print against a real
 * store: a printed command that the CLI would refuse fails it.
 */
export const POLICY_FILE = "policy.json";

/** Stores `file` as the tenant's next policy version. */
export function policySetCommand(tenantId: string, file = POLICY_FILE): string {
  return `warden policy set --tenant ${tenantId} --file ${file}`;
}
