import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { AgentKeyRecord, AgentOperatorRecord, Store } from "../store/interfaces.js";
import { parseAgentJwks } from "./agentKeys.js";
import { AgentRegistry } from "./agentRegistry.js";
import type { DirectoryResult } from "./keyDirectory.js";

async function freshKey(): Promise<AgentKeyRecord> {
  const { publicKey } = generateKeyPairSync("ed25519");
  const parsed = await parseAgentJwks({ keys: [publicKey.export({ format: "jwk" })] });
  if (!parsed.ok || !parsed.keys[0]) throw new Error("no key");
  return parsed.keys[0];
}

const operator = (name: string, keys: AgentKeyRecord[], fetchDirectory = false): AgentOperatorRecord => ({
  operator: name,
  signatureAgent: `https://${name}.example`,
  keys,
  fetchDirectory,
  createdAt: 1,
  updatedAt: 1,
});

/**
 * A registry over `operators` (as the store lists them) whose key directories serve `served`, by
 * Signature-Agent URL. The store is only ever listed, so a list stands in for it: that also lets a
 * test hold a key stored for two operators, which the store itself refuses.
 */
function registryOver(operators: AgentOperatorRecord[], served: Record<string, AgentKeyRecord[]>) {
  const store = { agents: { list: async () => operators } } as unknown as Store;
  const fetch = async (url: string): Promise<DirectoryResult> => {
    const keys = served[url];
    return keys ? { ok: true, keys, maxAgeSeconds: 600 } : { ok: false, message: "HTTP 404" };
  };
  const registry = new AgentRegistry(
    store,
    3600,
    {
      enabled: true,
      limits: { timeoutMs: 1000, maxBytes: 4096, allowPrivate: false },
      minTtlSeconds: 60,
      maxTtlSeconds: 3600,
    },
    { maxValiditySeconds: 600 },
    Date.now,
    fetch,
  );
  const reports: string[] = [];
  registry.report = (err) => reports.push((err as Error).message);
  return { registry, reports };
}

/** Loads the operators and fetches every directory, in the given order. */
async function loadAll(registry: AgentRegistry, order: AgentOperatorRecord[]): Promise<void> {
  await registry.reload();
  for (const op of order) await registry.refreshDirectory(op);
}

describe("agent registry: a key names one operator", () => {
  it("a directory serving another operator's stored key gets nothing for it (the key stays its owner's)", async () => {
    const key = await freshKey();
    const sigagent = operator("sigagent", [key]);
    const squatter = operator("aaa-squatter", [], true);
    const { registry, reports } = registryOver([squatter, sigagent], { [squatter.signatureAgent]: [key] });
    await loadAll(registry, [squatter]);
    expect(registry.lookup(key.thumbprint)).toMatchObject({
      operator: "sigagent",
      signatureAgent: "https://sigagent.example",
      maxValiditySeconds: 600,
    });
    // Reported once, when it appears, not at every rebuild.
    await loadAll(registry, [squatter, squatter]);
    expect(reports).toEqual([
      `agent key ${key.thumbprint} is registered for sigagent; the key directory of aaa-squatter also serves it and is not trusted for it`,
    ]);
  });

  it("a key only directories serve: its one directory's; served by two, nobody's, whichever answered first", async () => {
    const shared = await freshKey();
    const own = await freshKey();
    const a = operator("alpha", [], true);
    const b = operator("beta", [], true);
    const served = { [a.signatureAgent]: [shared, own], [b.signatureAgent]: [shared] };
    for (const order of [
      [a, b],
      [b, a],
    ]) {
      const { registry, reports } = registryOver([a, b], served);
      await loadAll(registry, order);
      expect(registry.lookup(shared.thumbprint)).toEqual({ ambiguous: true });
      expect(registry.lookup(own.thumbprint)).toMatchObject({ operator: "alpha" });
      expect(reports).toEqual([
        `agent key ${shared.thumbprint} is served by the key directories for several operators (alpha, beta): it identifies none of them until only one has it`,
      ]);
    }
  });

  it("a key stored for two operators (data older than the store's check) identifies nobody, not the first by name", async () => {
    const key = await freshKey();
    const { registry, reports } = registryOver([operator("aaa", [key]), operator("zzz", [key])], {});
    await registry.reload();
    expect(registry.lookup(key.thumbprint)).toEqual({ ambiguous: true });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/is registered for several operators \(aaa, zzz\)/);
  });

  it("an operator's own key, stored and in its directory too, is no conflict", async () => {
    const key = await freshKey();
    const op = operator("solo", [key], true);
    const { registry, reports } = registryOver([op], { [op.signatureAgent]: [key] });
    await loadAll(registry, [op]);
    expect(registry.lookup(key.thumbprint)).toMatchObject({ operator: "solo" });
    expect(reports).toEqual([]);
  });
});
