import { readFile } from "node:fs/promises";
import type { AgentKeyRecord, AgentOperatorRecord } from "../store/interfaces.js";
import { agentOrigin, parseAgentJwks } from "../webBotAuth/agentKeys.js";
import { type DirectoryLimits, type DirectoryResult, fetchKeyDirectory } from "../webBotAuth/keyDirectory.js";
import { type Command, str, UsageError } from "./command.js";

function operatorName(value: string | undefined): string {
  if (value === undefined) throw new UsageError("--operator <name> is required");
  const name = value.trim();
  if (name === "" || name.length > 128) throw new UsageError("--operator must be 1 to 128 characters");
  return name;
}

interface Served {
  op: AgentOperatorRecord;
  result: DirectoryResult;
}

/** The key directories of the other operators registered with --fetch-directory, as they answer now. */
function othersDirectories(others: AgentOperatorRecord[], limits: DirectoryLimits): Promise<Served[]> {
  return Promise.all(
    others
      .filter((op) => op.fetchDirectory)
      .map(async (op) => ({ op, result: await fetchKeyDirectory(op.signatureAgent, limits) })),
  );
}

/**
 * Whether a key about to enter the registry is already another operator's: stored for it, or served by
 * its key directory. A key names one operator (docs/security-model.md): were it listed for two, the
 * servers would attribute it to neither.
 */
function findClash(
  candidates: { key: AgentKeyRecord; from: string }[],
  others: AgentOperatorRecord[],
  served: Served[],
): string | undefined {
  for (const { key, from } of candidates) {
    const holder = others.find((op) => op.keys.some((k) => k.thumbprint === key.thumbprint));
    if (holder) return `key ${key.thumbprint} (${from}) is already registered for ${holder.operator}`;
    const server = served.find(
      ({ result }) => result.ok && result.keys.some((k) => k.thumbprint === key.thumbprint),
    );
    if (server)
      return `key ${key.thumbprint} (${from}) is served by the key directory of ${server.op.operator}`;
  }
  return undefined;
}

/** `warden agent …`: the registry of known agent operators (Web Bot Auth), shared by every tenant. */
export const AGENT_COMMANDS: Record<string, Command> = {
  "agent add": {
    usage:
      "warden agent add --operator <name> --signature-agent <https-url> [--jwks <file>] [--fetch-directory] (one or both)",
    summary:
      "Register (or replace) an agent operator: its Signature-Agent URL and its public keys, from a JWKS file and/or fetched from its key directory (/.well-known/http-message-signatures-directory). A key names one operator: one that another operator has (stored, or served by its directory) is refused.",
    options: {
      operator: { type: "string" },
      "signature-agent": { type: "string" },
      jwks: { type: "string" },
      "fetch-directory": { type: "boolean" },
    },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const operator = operatorName(str(values.operator));
      const signatureAgent = str(values["signature-agent"]);
      if (signatureAgent === undefined) throw new UsageError("--signature-agent <https-url> is required");
      const origin = agentOrigin(signatureAgent);
      if (!origin?.startsWith("https://")) throw new UsageError("--signature-agent must be an https URL");
      const file = str(values.jwks);
      const fetchDirectory = values["fetch-directory"] === true;
      if (file === undefined && !fetchDirectory)
        throw new UsageError("give --jwks <file>, --fetch-directory, or both");

      let keys: AgentKeyRecord[] = [];
      if (file !== undefined) {
        let json: unknown;
        try {
          json = JSON.parse(await readFile(file, "utf8"));
        } catch (err) {
          ctx.io.err(`cannot read ${file} as JSON: ${(err as Error).message}`);
          return 1;
        }
        const parsed = await parseAgentJwks(json);
        if (!parsed.ok) {
          ctx.io.err(`${file}: ${parsed.message}`);
          return 1;
        }
        keys = parsed.keys;
      }
      const config = ctx.config();
      const limits = {
        timeoutMs: config.agentDirectoryTimeoutMs,
        maxBytes: config.agentDirectoryMaxBytes,
        allowPrivate: config.agentDirectoryAllowPrivate,
        ...(ctx.directoryCa === undefined ? {} : { ca: ctx.directoryCa }),
      };
      // The directory's keys enter the registry too: they are checked now, like the file's.
      const directory = fetchDirectory ? await fetchKeyDirectory(origin, limits) : undefined;
      const others = (await ctx.withStore((store) => store.agents.list())).filter(
        (a) => a.operator !== operator,
      );
      const candidates = [
        ...keys.map((key) => ({ key, from: `from ${file}` })),
        ...(directory?.ok ? directory.keys : []).map((key) => ({ key, from: "served by its key directory" })),
      ];
      const served = candidates.length === 0 ? [] : await othersDirectories(others, limits);
      const clash = findClash(candidates, others, served);
      if (clash) {
        ctx.io.err(`${clash}; a key names one operator, nothing was registered`);
        return 1;
      }
      const now = Date.now();
      const put = await ctx.withStore((store) =>
        store.agents.put({
          operator,
          signatureAgent: origin,
          keys,
          fetchDirectory,
          createdAt: now,
          updatedAt: now,
        }),
      );
      if (!put.ok) {
        ctx.io.err(
          `key ${put.thumbprint} is already registered for ${put.operator}; a key names one operator, nothing was registered`,
        );
        return 1;
      }
      ctx.io.out(
        `registered ${operator} (${origin}) with ${keys.length} key(s): ${keys.map((k) => k.thumbprint).join(", ") || "none"}`,
      );
      if (directory) {
        ctx.io.out(
          directory.ok
            ? `key directory reachable: ${directory.keys.length} key(s); servers fetch it in the background`
            : `warning: key directory not fetched now (${directory.message}); servers will keep trying`,
        );
      }
      for (const { op, result } of served) {
        if (!result.ok) {
          ctx.io.out(
            `warning: the key directory of ${op.operator} did not answer (${result.message}), so its keys were not compared; a key both directories serve identifies nobody`,
          );
        }
      }
      return 0;
    },
  },
  "agent list": {
    usage: "warden agent list [--json]",
    summary: "List registered agent operators with their Signature-Agent URL and key thumbprints (keyids).",
    options: { json: { type: "boolean" } },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const agents = await ctx.withStore((store) => store.agents.list());
      if (values.json === true) {
        ctx.io.out(
          JSON.stringify(
            agents.map((a) => ({
              operator: a.operator,
              signatureAgent: a.signatureAgent,
              keyids: a.keys.map((k) => k.thumbprint),
              fetchDirectory: a.fetchDirectory,
            })),
          ),
        );
        return 0;
      }
      if (agents.length === 0) ctx.io.out("no agent operators registered");
      for (const a of agents) {
        ctx.io.out(
          `${a.operator}\t${a.signatureAgent}\tkeys: ${a.keys.map((k) => `${k.thumbprint} (${k.alg})`).join(", ") || "none"}${a.fetchDirectory ? "\t+ key directory" : ""}`,
        );
      }
      return 0;
    },
  },
  "agent remove": {
    usage: "warden agent remove --operator <name>",
    summary: "Remove an agent operator; its signatures are unverified from the next registry reload on.",
    options: { operator: { type: "string" } },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const operator = operatorName(str(values.operator));
      const removed = await ctx.withStore((store) => store.agents.remove(operator));
      if (!removed) {
        ctx.io.err(`no agent operator named "${operator}"`);
        return 1;
      }
      ctx.io.out(`removed ${operator}`);
      return 0;
    },
  },
};
