import { readFile } from "node:fs/promises";
import { IPV4_PREFIX, IPV6_PREFIX } from "../operations/verify/signals/ip.js";
import { compilePolicy, narrowNetworks } from "../policy/tenantPolicy.js";
import { type Command, requireTenant, str, UsageError } from "./command.js";

/** `warden policy …`: a tenant's versioned policy document. */
export const POLICY_COMMANDS: Record<string, Command> = {
  "policy get": {
    usage: "warden policy get --tenant <tenantId>",
    summary:
      "Print the tenant's current policy document as JSON on stdout (its version on stderr); {} when it has none.",
    options: { tenant: { type: "string" } },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const tenantId = requireTenant(str(values.tenant));
      const found = await ctx.withStore(async (store) => ({
        tenant: await store.tenants.get(tenantId),
        record: await store.policies.current(tenantId),
      }));
      if (!found.tenant) {
        ctx.io.err(`no tenant "${tenantId}"`);
        return 1;
      }
      if (!found.record) {
        ctx.io.err(`tenant ${tenantId} has no policy document: the defaults apply`);
        ctx.io.out("{}");
        return 0;
      }
      ctx.io.err(`policy v${found.record.version} of tenant ${tenantId}`);
      ctx.io.out(JSON.stringify(JSON.parse(found.record.document), null, 2));
      return 0;
    },
  },
  "policy set": {
    usage: "warden policy set --tenant <tenantId> --file <policy.json>",
    summary:
      "Validate a policy document and store it as the tenant's next version; running servers apply it within WARDEN_POLICY_REFRESH_SECONDS.",
    options: { tenant: { type: "string" }, file: { type: "string" } },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const tenantId = requireTenant(str(values.tenant));
      const file = str(values.file);
      if (file === undefined) throw new UsageError("--file <policy.json> is required");
      let document: unknown;
      try {
        document = JSON.parse(await readFile(file, "utf8"));
      } catch (err) {
        ctx.io.err(`cannot read ${file} as JSON: ${(err as Error).message}`);
        return 1;
      }
      const compiled = compilePolicy(document, "new");
      if (!compiled.ok) {
        ctx.io.err(`${file} is not a valid policy:\n${compiled.errors.map((e) => `  - ${e}`).join("\n")}`);
        return 1;
      }
      // Verify truncates every address it is not given raw: a narrower list network can match only a
      // tenant's raw addresses, and never those of a tenant without the raw-PII opt-in.
      const narrow = narrowNetworks(compiled.policy, { ipv4: IPV4_PREFIX, ipv6: IPV6_PREFIX });
      // A tenant without the raw-PII opt-in sends an address's hash only (emailSha256): its
      // attempts carry no domain, so a listed domain would never match one of them.
      const domains = (["allow", "deny"] as const).flatMap((side) =>
        [...compiled.policy[side].emailDomains].map((d) => `${side}.emailDomains: ${JSON.stringify(d)}`),
      );
      const stored = await ctx.withStore(async (store) => {
        const tenant = await store.tenants.get(tenantId);
        if (!tenant) return { outcome: "no tenant" as const };
        if (narrow.length > 0 && !tenant.rawPii) return { outcome: "narrow" as const };
        if (domains.length > 0 && !tenant.rawPii) return { outcome: "domains" as const };
        return {
          outcome: "stored" as const,
          version: await store.policies.put(tenantId, JSON.stringify(document), Date.now()),
        };
      });
      if (stored.outcome === "no tenant") {
        ctx.io.err(`no tenant "${tenantId}"`);
        return 1;
      }
      const lines = narrow.map((n) => `  - ${n}`).join("\n");
      if (stored.outcome === "narrow") {
        ctx.io.err(
          `${file} is not a valid policy for tenant ${tenantId}:\n${lines}\n  verify reads an attempt's network as its /${IPV4_PREFIX} (IPv4) or /${IPV6_PREFIX} (IPv6) unless the raw address is sent (subject.ip), which this tenant has not opted in to (raw-pii off): these entries would never match. List the /${IPV4_PREFIX} or /${IPV6_PREFIX} instead.`,
        );
        return 1;
      }
      if (stored.outcome === "domains") {
        ctx.io.err(
          `${file} is not a valid policy for tenant ${tenantId}:\n${domains.map((d) => `  - ${d}`).join("\n")}\n  this tenant has not opted in to raw PII (raw-pii off), so its attempts carry the address's hash (subject.emailSha256), never its domain: these entries would never match. List addresses by their hash (emailHashes) instead, or opt the tenant in.`,
        );
        return 1;
      }
      if (narrow.length > 0) {
        ctx.io.err(
          `warning: these entries match only attempts that send the raw address (subject.ip); attempts with ipTrunc, as the SDK sends by default, are read as their /${IPV4_PREFIX} or /${IPV6_PREFIX} and never match them:\n${lines}`,
        );
      }
      const { version } = stored;
      ctx.io.out(
        `stored policy v${version} for tenant ${tenantId}; servers apply it within ${ctx.config().policyRefreshSeconds} s`,
      );
      return 0;
    },
  },
};
