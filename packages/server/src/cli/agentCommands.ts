import { readFile } from "node:fs/promises";
import type { AgentOperatorRecord } from "../store/interfaces.js";
import { agentOrigin, parseAgentJwks } from "../webBotAuth/agentKeys.js";
import { fetchKeyDirectory } from "../webBotAuth/keyDirectory.js";
import { type Command, str, UsageError } from "./command.js";

function operatorName(value: string | undefined): string {
  if (value === undefined) throw new UsageError("--operator <name> is required");
  const name = value.trim();
  if (name === "" || name.length > 128) throw new UsageError("--operator must be 1 to 128 characters");
  return name;
}

/** `warden agent …`: the registry of known agent operators (Web Bot Auth), shared by every tenant. */
export const AGENT_COMMANDS: Record<string, Command> = {
  "agent add": {
    usage:
      "warden agent add --operator <name> --signature-agent <https-url> (--jwks <file> | --fetch-directory) [--fetch-directory]",
    summary:
      "Register (or replace) an agent operator: its Signature-Agent URL and its public keys, from a JWKS file and/or fetched from its key directory (/.well-known/http-message-signatures-directory).",
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

      let keys: AgentOperatorRecord["keys"] = [];
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
      const now = Date.now();
      const clash = await ctx.withStore(async (store) => {
        const others = (await store.agents.list()).filter((a) => a.operator !== operator);
        const taken = keys.find((k) =>
          others.some((o) => o.keys.some((ok) => ok.thumbprint === k.thumbprint)),
        );
        if (taken) return taken.thumbprint;
        await store.agents.put({
          operator,
          signatureAgent: origin,
          keys,
          fetchDirectory,
          createdAt: now,
          updatedAt: now,
        });
        return undefined;
      });
      if (clash) {
        ctx.io.err(`key ${clash} is already registered for another operator; a key names one operator`);
        return 1;
      }
      ctx.io.out(
        `registered ${operator} (${origin}) with ${keys.length} key(s): ${keys.map((k) => k.thumbprint).join(", ") || "none"}`,
      );
      if (fetchDirectory) {
        const config = ctx.config();
        const result = await fetchKeyDirectory(origin, {
          timeoutMs: config.agentDirectoryTimeoutMs,
          maxBytes: config.agentDirectoryMaxBytes,
          allowPrivate: config.agentDirectoryAllowPrivate,
        });
        ctx.io.out(
          result.ok
            ? `key directory reachable: ${result.keys.length} key(s); servers fetch it in the background`
            : `warning: key directory not fetched now (${result.message}); servers will keep trying`,
        );
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
