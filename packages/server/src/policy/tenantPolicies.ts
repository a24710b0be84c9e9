import type { Store } from "../store/interfaces.js";
import { compilePolicy, DEFAULT_TENANT_POLICY, type TenantPolicy } from "./tenantPolicy.js";

interface Cached {
  policy: TenantPolicy;
  loadedAt: number;
}

/**
 * Each tenant's current policy, compiled, as this process sees it. A tenant's first request loads it
 * from the store; after `refreshMs` the cached copy is still used while a reload runs in the
 * background, so a `warden policy set` reaches every process within about that time. A stored
 * document that no longer compiles (a stricter release) falls back to the default policy, reported.
 */
export class TenantPolicies {
  private readonly cache = new Map<string, Cached>();
  private readonly loading = new Map<string, Promise<TenantPolicy>>();
  /** Where background failures go; the app points it at its logger. */
  report: (err: unknown, what: string) => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly refreshMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  async get(tenantId: string): Promise<TenantPolicy> {
    const hit = this.cache.get(tenantId);
    if (!hit) return this.load(tenantId);
    if (this.clock() - hit.loadedAt > this.refreshMs) {
      this.load(tenantId).catch((err: unknown) => this.report(err, "tenant policy not reloaded"));
    }
    return hit.policy;
  }

  /** The cached policy without loading (the degraded path records its version when it has one). */
  peek(tenantId: string): TenantPolicy | undefined {
    return this.cache.get(tenantId)?.policy;
  }

  /** Drops the cached copy (after this process stored a new version). */
  forget(tenantId: string): void {
    this.cache.delete(tenantId);
  }

  private load(tenantId: string): Promise<TenantPolicy> {
    const running = this.loading.get(tenantId);
    if (running) return running;
    const promise = (async () => {
      const record = await this.store.policies.current(tenantId);
      let policy = DEFAULT_TENANT_POLICY;
      if (record) {
        const compiled = compilePolicy(JSON.parse(record.document) as unknown, `v${record.version}`);
        if (compiled.ok) policy = compiled.policy;
        else
          this.report(
            new Error(compiled.errors.join("; ")),
            `stored policy v${record.version} of ${tenantId} is invalid`,
          );
      }
      this.cache.set(tenantId, { policy, loadedAt: this.clock() });
      return policy;
    })().finally(() => this.loading.delete(tenantId));
    this.loading.set(tenantId, promise);
    return promise;
  }
}
