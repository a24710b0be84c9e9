import { issueApiKey, parseScopes } from "../admin/apiKeys.js";
import { DEFAULT_MODEL } from "../operations/verify/decisionModel.js";
import { activationDelayMs, keepPublishedMs, newSigningKey } from "../tokens/signingKeys.js";
import { type Command, requireTenant, str, UsageError } from "./command.js";

/** `warden key …` and `warden signing-key rotate`: API keys and the keys that sign verdict tokens. */
export const KEY_COMMANDS: Record<string, Command> = {
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
  "signing-key rotate": {
    usage: "warden signing-key rotate",
    summary:
      "Start signing verdict tokens with a new ES256 key. Retired keys stay published until their last token has expired.",
    options: {},
    positionals: 0,
    run: async (_args, ctx) => {
      const config = ctx.config();
      // Published at once, signing only once every process has published it (activationDelayMs).
      const next = await newSigningKey(Date.now() + activationDelayMs(config.signingKeyRefreshSeconds));
      await ctx.withStore((store) =>
        store.signingKeys.rotate(
          next,
          // Published as long as a verdict token or a page token it signed may still be presented.
          keepPublishedMs(
            Math.max(config.tokenTtlSeconds, DEFAULT_MODEL.pageTokenTtlMs / 1000),
            config.signingKeyRefreshSeconds,
          ),
        ),
      );
      ctx.io.out(
        `new signing key ${next.kid}: published by every running server within ${config.signingKeyRefreshSeconds} s, signing from ${new Date(next.createdAt).toISOString()}`,
      );
      return 0;
    },
  },
};
