import type { ApiKeyRecord, Tenant } from "../interfaces.js";

export type KeyWithTenant = { key: ApiKeyRecord; tenant: Tenant };

/**
 * API keys found by hash, kept in memory while the database cannot have changed them: every request
 * authenticates, and the lookup was a tenth of SQLite's time on the verify path.
 *
 * `dataVersion` must change whenever another connection commits (SQLite's `PRAGMA data_version`), so
 * a key revoked by the CLI or by another process is seen on the very next request; writes made
 * through this store call `invalidate`. A generation number keeps a lookup that raced with either
 * from caching what it read before. Only keys that exist are cached, and at most `max` of them.
 */
export class KeyCache {
  private entries = new Map<string, KeyWithTenant>();
  private version: number;
  private generation = 0;

  constructor(
    private readonly dataVersion: () => number,
    private readonly max = 1024,
  ) {
    this.version = dataVersion();
  }

  /** A ticket to pass to `set`: where the cache stood before the lookup it will carry. */
  get(keyHash: string): { hit: KeyWithTenant | undefined; ticket: number } {
    const now = this.dataVersion();
    if (now !== this.version) {
      this.version = now;
      this.invalidate();
    }
    return { hit: this.entries.get(keyHash), ticket: this.generation };
  }

  set(keyHash: string, value: KeyWithTenant, ticket: number): void {
    if (ticket !== this.generation) return;
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(keyHash, value);
  }

  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }
}
