import { beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../store/interfaces.js";

/**
 * Tenants: created once (TenantStore). Registered in the store contract's describe (store.ts):
 * `stores` gives its two handles on one database once they are open, with its tenants t1 and t2.
 */
export function tenantTests(stores: () => { a: Store; b: Store }): void {
  describe("tenants", () => {
    let a: Store;
    let b: Store;
    beforeAll(() => {
      ({ a, b } = stores());
    });
    it("creates a tenant once; a second create of the same id changes nothing", async () => {
      expect(await b.tenants.create({ id: "t1", rawPii: true, logOnly: true, createdAt: 9 })).toBe(false);
      expect(await a.tenants.get("t1")).toEqual({ id: "t1", rawPii: false, logOnly: false, createdAt: 1 });
      expect(await a.tenants.get("nope")).toBeUndefined();
      expect((await a.tenants.list()).map((t) => t.id)).toEqual(["t1", "t2"]);
    });
  });
}
