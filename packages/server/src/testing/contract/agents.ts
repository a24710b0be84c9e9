import { beforeAll, describe, expect, it } from "vitest";
import type { AgentOperatorRecord, Store } from "../../store/interfaces.js";

/**
 * The agent registry (AgentStore). Registered in the store contract's describe (store.ts): `stores`
 * gives its two handles on one database once they are open, with its tenants t1 and t2.
 */
export function agentTests(stores: () => { a: Store; b: Store }): void {
  describe("agents", () => {
    let a: Store;
    let b: Store;
    beforeAll(() => {
      ({ a, b } = stores());
    });
    const key = {
      thumbprint: "tp1",
      alg: "ed25519" as const,
      jwk: { kty: "OKP", crv: "Ed25519", x: "AAAA" },
    };
    const op = (o: Partial<AgentOperatorRecord> = {}): AgentOperatorRecord => ({
      operator: "Example Bot",
      signatureAgent: "https://bot.example",
      keys: [key],
      fetchDirectory: false,
      createdAt: 10,
      updatedAt: 10,
      ...o,
    });

    it("registers an operator, replaces it keeping createdAt, lists and removes it", async () => {
      await a.agents.put(op());
      await b.agents.put(op({ keys: [], fetchDirectory: true, createdAt: 99, updatedAt: 20 }));
      expect(await a.agents.list()).toEqual([op({ keys: [], fetchDirectory: true, updatedAt: 20 })]);
      expect(await b.agents.remove("Example Bot")).toBe(true);
      expect(await a.agents.remove("Example Bot")).toBe(false);
      expect(await a.agents.list()).toEqual([]);
    });

    it("a key stored for one operator is refused for another, and of concurrent claims one wins", async () => {
      expect(await a.agents.put(op())).toEqual({ ok: true });
      expect(await b.agents.put(op({ operator: "Squatter", signatureAgent: "https://sq.example" }))).toEqual({
        ok: false,
        thumbprint: "tp1",
        operator: "Example Bot",
      });
      // The owner may replace its own entry with the same key.
      expect(await b.agents.put(op({ updatedAt: 30 }))).toEqual({ ok: true });
      expect((await a.agents.list()).map((r) => r.operator)).toEqual(["Example Bot"]);
      expect(await a.agents.remove("Example Bot")).toBe(true);

      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? a : b).agents.put(
            op({ operator: `Claimant ${i}`, keys: [{ ...key, thumbprint: "tp2" }] }),
          ),
        ),
      );
      expect(claims.filter((c) => c.ok)).toHaveLength(1);
      const stored = await a.agents.list();
      expect(stored).toHaveLength(1);
      for (const r of stored) await a.agents.remove(r.operator);
    });
  });
}
