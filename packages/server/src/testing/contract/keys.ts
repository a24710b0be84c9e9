import { beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../store/interfaces.js";
import { newSigningKey } from "../../tokens/signingKeys.js";

/**
 * API keys, found by hash and revoked at once, and one active signing key (ApiKeyStore,
 * SigningKeyStore). Registered in the store contract's describe (store.ts): `stores` gives its two
 * handles on one database once they are open, with its tenants t1 and t2.
 */
export function keyTests(stores: () => { a: Store; b: Store }): void {
  describe("API keys and signing keys", () => {
    let a: Store;
    let b: Store;
    beforeAll(() => {
      ({ a, b } = stores());
    });
    it("finds a key with its tenant by hash, and sees a revocation at once", async () => {
      const rec = {
        id: "key_1",
        tenantId: "t2",
        scopes: ["verify:write" as const],
        logOnly: true,
        createdAt: 5,
        revokedAt: null,
      };
      await a.apiKeys.create(rec, "hash-1");
      const found = await b.apiKeys.findByHash("hash-1");
      expect(found?.key).toEqual(rec);
      expect(found?.tenant.id).toBe("t2");
      expect(found?.tenant.rawPii).toBe(true);
      expect(await b.apiKeys.findByHash("hash-unknown")).toBeUndefined();
      expect(await a.apiKeys.revoke("key_1", 77)).toBe(true);
      expect(await b.apiKeys.revoke("key_1", 78)).toBe(false);
      expect((await b.apiKeys.findByHash("hash-1"))?.key.revokedAt).toBe(77);
      expect((await a.apiKeys.list("t2")).map((k) => k.id)).toEqual(["key_1"]);
      expect(await a.apiKeys.list("t1")).toEqual([]);
    });

    it("keeps exactly one active signing key through concurrent first inserts and rotations", async () => {
      const firsts = await Promise.all(
        [a, b, a, b].map(async (s) => s.signingKeys.insertIfNone(await newSigningKey(10))),
      );
      expect(firsts.filter(Boolean)).toHaveLength(1);
      await Promise.all([a, b].map(async (s) => s.signingKeys.rotate(await newSigningKey(20), 1000)));
      const published = await a.signingKeys.listPublished(21);
      expect(published.filter((k) => k.retiredAt === null)).toHaveLength(1);
      expect(published).toHaveLength(3);
      // Retired keys stop being published once publishUntil has passed.
      const later = await a.signingKeys.listPublished(20 + 1000 + 1);
      expect(later).toHaveLength(1);
      expect(later[0]?.retiredAt).toBeNull();
    });
  });
}
