import { describe, expect, it } from "vitest";
import { type Store, StoreUnavailableError } from "../store/interfaces.js";
import { openSqliteStore } from "../store/sqlite/sqliteStore.js";
import { bootstrapDemoTenant, DEMO_TENANT } from "./bootstrap.js";

/** `inner` with tenants.count failing `times` times first, as a statement timeout fails it. */
function countFailing(inner: Store, times: number, error: () => Error): Store {
  let left = times;
  return {
    ...inner,
    tenants: {
      ...inner.tenants,
      count: async () => {
        if (left-- > 0) throw error();
        return inner.tenants.count();
      },
    },
  };
}

describe("first-run bootstrap", () => {
  it("retries its tenant count through store timeouts like the other start-up reads (a loaded database failed `warden serve` with exit 1)", async () => {
    const inner = await openSqliteStore({ file: ":memory:", busyTimeoutMs: 1000 });
    try {
      const store = countFailing(
        inner,
        2,
        () => new StoreUnavailableError("tenants.count: Query read timeout"),
      );
      const issued = await bootstrapDemoTenant(store, Date.now());
      expect(issued?.tenantId).toBe(DEMO_TENANT);
      expect(await inner.tenants.count()).toBe(1);
      // A second start finds the tenant and issues nothing.
      expect(await bootstrapDemoTenant(inner, Date.now())).toBeUndefined();
    } finally {
      await inner.close();
    }
  });

  it("does not retry what is not a store timeout", async () => {
    const inner = await openSqliteStore({ file: ":memory:", busyTimeoutMs: 1000 });
    try {
      const store = countFailing(inner, 1, () => new Error("a bug"));
      await expect(bootstrapDemoTenant(store, Date.now())).rejects.toThrow("a bug");
      expect(await inner.tenants.count()).toBe(0);
    } finally {
      await inner.close();
    }
  });
});
