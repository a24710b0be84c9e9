import { parseArgs } from "node:util";
import { issueApiKey, parseScopes } from "../admin/apiKeys.js";
import { type Config, ConfigError, loadConfig } from "../config.js";
import { openStore } from "../deps.js";
import { solvePow } from "../operations/challenge/proofOfWork.js";
import { isStripeSecretKey } from "../operations/challenge/stripeSetupIntents.js";
import { ledgerSummary } from "../operations/feedback/ledger.js";
import { serve } from "../serve.js";
import { keepPublishedMs, newSigningKey } from "../tokens/signingKeys.js";
import { AGENT_COMMANDS } from "./agentCommands.js";
import { type Command, type Context, type Io, requireTenant, str, UsageError } from "./command.js";
import { POLICY_COMMANDS } from "./policyCommands.js";

const COMMANDS: Record<string, Command> = {
  ...AGENT_COMMANDS,
  ...POLICY_COMMANDS,
  serve: {
    usage: "warden serve",
    summary:
      "Run the HTTP service (what `npm start` runs). Settings come from the environment; see the README's Configuration.",
    options: {},
    positionals: 0,
    run: (_args, ctx) => serve(ctx.config(), ctx.io.out),
  },
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
  "key create": {
    usage:
      "warden key create --tenant <tenantId> --scopes verify:write,challenge:write,feedback:write [--log-only] [--json]",
    summary: "Issue an API key. The key is printed once and stored only as a hash.",
    options: {
      tenant: { type: "string" },
      scopes: { type: "string" },
      "log-only": { type: "boolean" },
      json: { type: "boolean" },
    },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const tenantId = requireTenant(str(values.tenant));
      const scopeList = str(values.scopes);
      if (scopeList === undefined) throw new UsageError("--scopes is required");
      let scopes: ReturnType<typeof parseScopes>;
      try {
        scopes = parseScopes(scopeList);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      const issued = await ctx.withStore(async (store) => {
        if (!(await store.tenants.get(tenantId))) return undefined;
        return issueApiKey(store, {
          tenantId,
          scopes,
          logOnly: values["log-only"] === true,
          now: Date.now(),
        });
      });
      if (!issued) {
        ctx.io.err(`unknown tenant "${tenantId}" (create it with: warden tenant create ${tenantId})`);
        return 1;
      }
      if (values.json) {
        ctx.io.out(JSON.stringify(issued));
      } else {
        ctx.io.out(`key id:  ${issued.keyId}`);
        ctx.io.out(`api key: ${issued.apiKey}`);
        ctx.io.out("The API key is shown only this once.");
      }
      return 0;
    },
  },
  "key list": {
    usage: "warden key list --tenant <tenantId> [--json]",
    summary: "List a tenant's keys (ids, scopes, state; never the secrets).",
    options: { tenant: { type: "string" }, json: { type: "boolean" } },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const tenantId = requireTenant(str(values.tenant));
      const keys = await ctx.withStore((store) => store.apiKeys.list(tenantId));
      if (values.json) {
        ctx.io.out(JSON.stringify(keys));
        return 0;
      }
      if (keys.length === 0) ctx.io.out(`no keys for tenant ${tenantId}`);
      for (const k of keys) {
        const state = k.revokedAt === null ? "active" : `revoked ${new Date(k.revokedAt).toISOString()}`;
        ctx.io.out(`${k.id}\t${k.scopes.join(",")}\t${k.logOnly ? "log-only\t" : ""}${state}`);
      }
      return 0;
    },
  },
  "key revoke": {
    usage: "warden key revoke <keyId>",
    summary: "Revoke a key; it stops working at once in every process.",
    options: {},
    positionals: 1,
    run: async ({ positionals }, ctx) => {
      const keyId = positionals[0] ?? "";
      const revoked = await ctx.withStore((store) => store.apiKeys.revoke(keyId, Date.now()));
      if (!revoked) {
        ctx.io.err(`no active key "${keyId}"`);
        return 1;
      }
      ctx.io.out(`revoked ${keyId}`);
      return 0;
    },
  },
  "ledger summary": {
    usage:
      "warden ledger summary --tenant <tenantId> [--since <date-time>] [--until <date-time>] [--action <action>] [--json]",
    summary:
      "Effective outcomes, the ledger dollar total (credit_burn in usd), first-year ARR (converted in usd) and quarantined observations, over observedAt in [since, until).",
    options: {
      tenant: { type: "string" },
      since: { type: "string" },
      until: { type: "string" },
      action: { type: "string" },
      json: { type: "boolean" },
    },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const tenantId = requireTenant(str(values.tenant));
      const time = (name: "since" | "until"): number | undefined => {
        const raw = str(values[name]);
        if (raw === undefined) return undefined;
        const ms = Date.parse(raw);
        if (!Number.isFinite(ms))
          throw new UsageError(`--${name} must be an ISO 8601 date or date-time, got "${raw}"`);
        return ms;
      };
      const since = time("since");
      const until = time("until");
      const action = str(values.action);
      const summary = await ctx.withStore((store) =>
        ledgerSummary(store, tenantId, {
          ...(since === undefined ? {} : { since }),
          ...(until === undefined ? {} : { until }),
          ...(action === undefined ? {} : { action }),
        }),
      );
      if (values.json) {
        ctx.io.out(JSON.stringify(summary));
        return 0;
      }
      const range = `${summary.since ?? "the beginning"} to ${summary.until ?? "now"}${action ? `, action ${action}` : ""}`;
      ctx.io.out(`Ledger for ${tenantId}, observed from ${range}`);
      ctx.io.out(`  ledger dollar total (effective credit_burn, usd): ${summary.ledgerUsdTotal}`);
      for (const [unit, total] of Object.entries(summary.creditBurnOtherUnits)) {
        ctx.io.out(`  credit_burn in ${unit} (not converted): ${total}`);
      }
      ctx.io.out(`  first-year ARR (effective converted, usd): ${summary.firstYearArrUsd}`);
      ctx.io.out("  outcome                  effective  quarantined  totals");
      for (const [outcome, o] of Object.entries(summary.outcomes).sort()) {
        const totals = Object.entries(o.totals)
          .map(([u, v]) => `${v} ${u}`)
          .join(", ");
        ctx.io.out(
          `  ${outcome.padEnd(24)} ${String(o.effective).padStart(9)}  ${String(o.quarantined).padStart(11)}  ${totals}`,
        );
      }
      if (summary.quarantined.length > 0) ctx.io.out("Quarantined (newest first):");
      for (const q of summary.quarantined) {
        const other = q.conflictsWith
          ? `${q.conflictsWith.outcome} ${q.conflictsWith.feedbackId}`
          : "unknown";
        ctx.io.out(
          `  ${q.observation.feedbackId} ${q.observation.outcome} on ${q.observation.eventId}, conflicts with ${other}`,
        );
      }
      return 0;
    },
  },
  "pow solve": {
    usage: "warden pow solve --seed <seed> --difficulty <1-8> [--json]",
    summary:
      'Solve a proof_of_work challenge: print a nonce such that sha256_hex(seed + nonce) starts with <difficulty> zeros. Complete with proof {"nonce": …}.',
    options: { seed: { type: "string" }, difficulty: { type: "string" }, json: { type: "boolean" } },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const seed = str(values.seed);
      if (seed === undefined || seed === "") throw new UsageError("--seed is required");
      const raw = str(values.difficulty);
      const difficulty = Number(raw);
      if (raw === undefined || !Number.isInteger(difficulty) || difficulty < 1 || difficulty > 8) {
        throw new UsageError("--difficulty must be a whole number from 1 to 8");
      }
      const started = performance.now();
      const { nonce, attempts } = solvePow(seed, difficulty);
      const ms = Math.round(performance.now() - started);
      ctx.io.out(values.json ? JSON.stringify({ nonce, attempts, ms }) : nonce);
      return 0;
    },
  },
  "signing-key rotate": {
    usage: "warden signing-key rotate",
    summary:
      "Start signing verdict tokens with a new ES256 key. Retired keys stay published until their last token has expired.",
    options: {},
    positionals: 0,
    run: async (_args, ctx) => {
      const config = ctx.config();
      const next = await newSigningKey(Date.now());
      await ctx.withStore((store) =>
        store.signingKeys.rotate(
          next,
          keepPublishedMs(config.tokenTtlSeconds, config.signingKeyRefreshSeconds),
        ),
      );
      ctx.io.out(
        `new signing key ${next.kid}; running servers pick it up within ${config.signingKeyRefreshSeconds} s`,
      );
      return 0;
    },
  },
};

function topHelp(): string {
  const lines = ["Usage: warden <command> [options]", "", "Commands:"];
  for (const c of Object.values(COMMANDS)) lines.push(`  ${c.usage}`, `      ${c.summary}`);
  lines.push("", "Every command accepts --help.");
  return lines.join("\n");
}

function findCommand(argv: string[]): { name: string; rest: string[] } | undefined {
  const two = argv.slice(0, 2).join(" ");
  if (COMMANDS[two]) return { name: two, rest: argv.slice(2) };
  const one = argv[0] ?? "";
  if (COMMANDS[one]) return { name: one, rest: argv.slice(1) };
  return undefined;
}

const ADMIN_STORE_TIMEOUT_MS = 5000;

export async function runCli(
  argv: string[],
  io: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) },
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    io.out(topHelp());
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = Object.keys(COMMANDS).filter((n) => n.startsWith(`${argv[0]} `));
    if (group.length > 0 && (argv.length === 1 || argv[1] === "--help" || argv[1] === "-h")) {
      io.out(group.map((n) => `  ${COMMANDS[n]?.usage}\n      ${COMMANDS[n]?.summary}`).join("\n"));
      return argv.length === 1 ? 2 : 0;
    }
    io.err(`unknown command: ${argv.slice(0, 2).join(" ")}\n\n${topHelp()}`);
    return 2;
  }
  const command = COMMANDS[found.name] as Command;
  if (found.rest.includes("--help") || found.rest.includes("-h")) {
    io.out(`Usage: ${command.usage}\n\n${command.summary}`);
    return 0;
  }
  let config: Config | undefined;
  const ctx: Context = {
    io,
    config: () => {
      config ??= loadConfig(env);
      return config;
    },
    withStore: async (fn) => {
      // Administration never touches counters: no Redis connection.
      const store = await openStore({ ...ctx.config(), redisUrl: undefined }, ADMIN_STORE_TIMEOUT_MS);
      try {
        return await fn(store);
      } finally {
        await store.close();
      }
    },
  };
  try {
    const parsed = parseArgs({
      args: found.rest,
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
    if (parsed.positionals.length !== command.positionals) {
      throw new UsageError(
        command.positionals === 0
          ? `unexpected argument "${parsed.positionals[0]}"`
          : `expected ${command.positionals} argument(s), got ${parsed.positionals.length}`,
      );
    }
    return await command.run(parsed, ctx);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      io.err(`error: ${(err as Error).message}\nUsage: ${command.usage}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.err(`configuration error: ${err.message}`);
      return 2;
    }
    io.err(`error: ${(err as Error).message}`);
    return 1;
  }
}
