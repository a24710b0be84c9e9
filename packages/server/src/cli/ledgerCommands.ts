import { solvePow } from "../operations/challenge/methods/proofOfWork/proofOfWork.js";
import { ledgerSummary } from "../operations/feedback/ledger.js";
import { type Command, requireTenant, str, UsageError } from "./command.js";

/** `warden ledger summary` (the feedback ledger's totals) and `warden pow solve` (a test helper). */
export const LEDGER_COMMANDS: Record<string, Command> = {
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
};
