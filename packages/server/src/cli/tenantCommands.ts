import { isStripeSecretKey } from "../operations/challenge/methods/paymentPreauth/stripeSetupIntents.js";
import { type Command, requireTenant, str, UsageError } from "./command.js";

/** `warden tenant …`: tenants, their raw-PII and log-only settings and their payment key. */
export const TENANT_COMMANDS: Record<string, Command> = {
  "tenant create": {
    usage: "warden tenant create <tenantId> [--raw-pii] [--log-only]",
    summary:
      "Create a tenant. --raw-pii opts it in to raw subject.email and subject.ip; --log-only makes every verdict an observation.",
    options: { "raw-pii": { type: "boolean" }, "log-only": { type: "boolean" } },
    positionals: 1,
    run: async ({ values, positionals }, ctx) => {
      const id = requireTenant(positionals[0]);
      const created = await ctx.withStore((store) =>
        store.tenants.create({
          id,
          rawPii: values["raw-pii"] === true,
          logOnly: values["log-only"] === true,
          createdAt: Date.now(),
        }),
      );
      if (!created) {
        ctx.io.err(`tenant "${id}" already exists`);
        return 1;
      }
      ctx.io.out(`created tenant ${id}`);
      return 0;
    },
  },
  "tenant update": {
    usage: "warden tenant update <tenantId> (--stripe-secret-key <sk_…> | --remove-stripe-secret-key)",
    summary:
      "Configure the tenant's payment provider for payment_preauth challenges (the key is stored in the database and never printed).",
    options: { "stripe-secret-key": { type: "string" }, "remove-stripe-secret-key": { type: "boolean" } },
    positionals: 1,
    run: async ({ values, positionals }, ctx) => {
      const id = requireTenant(positionals[0]);
      const key = str(values["stripe-secret-key"]);
      const remove = values["remove-stripe-secret-key"] === true;
      if ((key === undefined) === !remove) {
        throw new UsageError("give exactly one of --stripe-secret-key or --remove-stripe-secret-key");
      }
      if (key !== undefined && !isStripeSecretKey(key)) {
        throw new UsageError("--stripe-secret-key must be a Stripe secret key (sk_test_… or sk_live_…)");
      }
      const updated = await ctx.withStore((store) => store.tenants.setPaymentKey(id, key ?? null));
      if (!updated) {
        ctx.io.err(`unknown tenant "${id}"`);
        return 1;
      }
      ctx.io.out(
        key === undefined
          ? `tenant ${id}: payment provider removed`
          : `tenant ${id}: Stripe ${key.startsWith("sk_live_") ? "live" : "test"} key stored; payment_preauth can be issued`,
      );
      return 0;
    },
  },
  "tenant list": {
    usage: "warden tenant list [--json]",
    summary: "List tenants.",
    options: { json: { type: "boolean" } },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const tenants = await ctx.withStore((store) => store.tenants.list());
      if (values.json) ctx.io.out(JSON.stringify(tenants));
      else for (const t of tenants) ctx.io.out(`${t.id}\traw-pii=${t.rawPii}\tlog-only=${t.logOnly}`);
      return 0;
    },
  },
};
