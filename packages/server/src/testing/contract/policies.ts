import { beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../store/interfaces.js";

/**
 * Tenant policy versions (PolicyStore). Registered in the store contract's describe (store.ts):
 * `stores` gives its two handles on one database once they are open, with its tenants t1 and t2.
 */
export function policyTests(stores: () => { a: Store; b: Store }): void {
  describe("tenant policies", () => {
    let a: Store;
    let b: Store;
    beforeAll(() => {
      ({ a, b } = stores());
    });
    it("numbers versions per tenant and reads the highest", async () => {
      expect(await a.policies.current("t1")).toBeUndefined();
      expect(await a.policies.put("t1", '{"a":1}', 5)).toBe(1);
      expect(await b.policies.put("t1", '{"a":2}', 6)).toBe(2);
      expect(await a.policies.put("t2", "{}", 7)).toBe(1);
      expect(await b.policies.current("t1")).toEqual({
        tenantId: "t1",
        version: 2,
        document: '{"a":2}',
        createdAt: 6,
      });
    });

    it("gives concurrent sets distinct versions and loses none", async () => {
      const versions = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).policies.put("t2", `{"n":${i}}`, 8)),
      );
      expect(new Set(versions).size).toBe(10);
      expect((await a.policies.current("t2"))?.version).toBe(11);
    });

    it("stores a change made from a version only while that version is the highest; of concurrent ones, one", async () => {
      await a.tenants.create({ id: "t3", rawPii: false, logOnly: false, createdAt: 3 });
      expect(await a.policies.putIfCurrent("t3", '{"n":0}', 1, 9)).toBeUndefined();
      expect(await a.policies.putIfCurrent("t3", '{"n":1}', 0, 9)).toBe(1);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).policies.putIfCurrent("t3", `{"m":${i}}`, 1, 10)),
      );
      expect(results.filter((v) => v === 2)).toHaveLength(1);
      expect(results.filter((v) => v === undefined)).toHaveLength(5);
      expect((await b.policies.current("t3"))?.version).toBe(2);
      expect(await b.policies.putIfCurrent("t3", '{"n":3}', 1, 11)).toBeUndefined();
    });
  });
}
