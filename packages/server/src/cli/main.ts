import { parseArgs } from "node:util";
import {
  type Config,
  ConfigError,
  loadConfig,
  parseWorkers,
  unknownText,
  unknownVariables,
} from "../config.js";
import { openStore } from "../deps.js";
import { serve } from "../serve.js";
import { MIGRATION_NAMES } from "../store/migrations.js";
import { AGENT_COMMANDS } from "./agentCommands.js";
import { type Command, type Context, type Io, str, UsageError } from "./command.js";
import { ERASE_COMMANDS } from "./eraseCommand.js";
import { KEY_COMMANDS } from "./keyCommands.js";
import { LEDGER_COMMANDS } from "./ledgerCommands.js";
import { POLICY_COMMANDS } from "./policyCommands.js";
import { TENANT_COMMANDS } from "./tenantCommands.js";

/** `--workers` as parseWorkers reads it; a bad value is a usage error (exit 2 with the usage). */
function workerFlag(raw: string, databaseUrl: string): number {
  try {
    return parseWorkers(raw, "--workers", databaseUrl);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}

const COMMANDS: Record<string, Command> = {
  ...AGENT_COMMANDS,
  ...POLICY_COMMANDS,
  serve: {
    usage: "warden serve [--workers <n>|auto] [--no-migrate] [--demo]",
    summary:
      "Run the HTTP service. Settings come from the environment; see the README's Configuration. It first brings the database schema up to date; with --no-migrate it only checks that `warden migrate` has (for a role without the right to change the schema). --workers (default WARDEN_WORKERS, 1): that many processes share PORT, auto one per core; a primary migrates once, replaces a worker that dies and passes SIGTERM on to every worker (docs/deployment.md, Workers). --demo (what `npm start` adds): on a database with no tenant, create tenant 'demo' and print a key with every scope.",
    options: { workers: { type: "string" }, "no-migrate": { type: "boolean" }, demo: { type: "boolean" } },
    positionals: 0,
    run: (args, ctx) => {
      const workers = str(args.values.workers);
      const config = ctx.config();
      return serve(config, ctx.io.out, {
        migrate: args.values["no-migrate"] !== true,
        demo: args.values.demo === true,
        ...(workers === undefined ? {} : { workers: workerFlag(workers, config.databaseUrl) }),
      });
    },
  },
  migrate: {
    usage: "warden migrate [--runtime-role <role>]",
    summary:
      "Bring the database schema up to date and exit (run it with a role that may change the schema, before starting `warden serve --no-migrate`). Several may run at once (Kysely's migration lock); it locks the tables it changes while it runs (docs/deployment.md, Upgrading). --runtime-role (PostgreSQL): grant that existing role what `warden serve --no-migrate` needs, with no right to change the schema: rows of every table, now and of the tables made later, and the function that makes the coming weeks' partitions (docs/deployment.md, Roles).",
    options: { "runtime-role": { type: "string" } },
    positionals: 0,
    run: async (args, ctx) => {
      const runtimeRole = str(args.values["runtime-role"]);
      const config = ctx.config();
      if (runtimeRole !== undefined && config.databaseUrl.startsWith("sqlite:")) {
        throw new UsageError("--runtime-role grants a PostgreSQL role; SQLite has no roles");
      }
      const store = await openStore({ ...config, redisUrl: undefined }, ADMIN_STORE_TIMEOUT_MS, {
        ...(runtimeRole === undefined ? {} : { runtimeRole }),
      });
      await store.close();
      ctx.io.out(
        `schema up to date: ${MIGRATION_NAMES.length} migrations, the latest ${MIGRATION_NAMES.at(-1)}${runtimeRole === undefined ? "" : `; role ${runtimeRole} may serve it (warden serve --no-migrate)`}`,
      );
      return 0;
    },
  },
  ...TENANT_COMMANDS,
  ...KEY_COMMANDS,
  ...LEDGER_COMMANDS,
  ...ERASE_COMMANDS,
};

function topHelp(): string {
  const lines = ["Usage: warden <command> [options]", "", "Commands:"];
  for (const c of Object.values(COMMANDS)) lines.push(`  ${c.usage}`, `      ${c.summary}`);
  lines.push("", "Every command accepts --help.");
  return lines.join("\n");
}

/** Parses a command's arguments as runCli does; throws UsageError or parseArgs' ERR_PARSE_ARGS_* errors. */
function parseArguments(command: Command, rest: string[]): Parameters<Command["run"]>[0] {
  const parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true });
  if (parsed.positionals.length !== command.positionals) {
    throw new UsageError(
      command.positionals === 0
        ? `unexpected argument "${parsed.positionals[0]}"`
        : `expected ${command.positionals} argument(s), got ${parsed.positionals.length}`,
    );
  }
  return parsed;
}

/** Every command's name ("serve", "policy set", …). */
export const commandNames = (): string[] => Object.keys(COMMANDS);

/**
 * The command a command line (its words after `warden`) names, its arguments checked as runCli checks
 * them, without running it; undefined when it names no command. Throws as runCli's parsing does: a
 * test feeds every command the docs and the console print through it.
 */
export function parseCommandLine(argv: string[]): { name: string; usage: string } | undefined {
  const found = findCommand(argv);
  if (!found) return undefined;
  const command = COMMANDS[found.name] as Command;
  parseArguments(command, found.rest);
  return { name: found.name, usage: command.usage };
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
  options: { directoryCa?: string } = {},
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
    ...(options.directoryCa === undefined ? {} : { directoryCa: options.directoryCa }),
    config: () => {
      if (!config) {
        config = loadConfig(env);
        const unknown = unknownVariables(env);
        if (unknown.length > 0) {
          io.err(
            `warning: ${unknownText(unknown)}; ignored (WARDEN_STRICT_CONFIG=true refuses to start instead)`,
          );
        }
      }
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
    return await command.run(parseArguments(command, found.rest), ctx);
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
