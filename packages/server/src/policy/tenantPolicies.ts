import type { Store } from "../store/interfaces.js";
import { compileStored, type TenantPolicy } from "./tenantPolicy.js";

interface Cached {
  policy: TenantPolicy;
  loadedAt: number;
  /** When a request last read it: tenants unused for KEEP_UNUSED_MS are dropped, not reloaded. */
  usedAt: number;
}

/** A tenant whose policy no request read for this long is dropped from the cache (loaded again on use). */
const KEEP_UNUSED_MS = 10 * 60_000;

/**
 * Each tenant's current policy, compiled, as this process sees it. A tenant's first request loads it
 * from the store; from then on a timer reloads every cached tenant's policy each `refreshMs`, in the
 * background, whether or not requests arrive, so a `warden policy set` reaches every process within
 * `refreshMs` plus one store read. While the store cannot be read the last copy stays in use (and a
 * request finding it older than `refreshMs` starts a reload too). A stored document that no longer
 * compiles (a stricter release) falls back to the default policy, reported.
 */
export class TenantPolicies {
  private readonly cache = new Map<string, Cached>();
  private readonly loading = new Map<string, Promise<TenantPolicy>>();
  private timer: NodeJS.Timeout | undefined;
  /** Where background failures go; the app points it at its logger. */
  report: (err: unknown, what: string) => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly refreshMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Starts the background refresh. */
  start(): void {
    this.timer ??= setInterval(() => this.refreshAll(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  async get(tenantId: string): Promise<TenantPolicy> {
    const hit = this.cache.get(tenantId);
    if (!hit) return this.load(tenantId);
    hit.usedAt = this.clock();
    if (this.clock() - hit.loadedAt > this.refreshMs) {
      this.load(tenantId).catch((err: unknown) => this.report(err, "tenant policy not reloaded"));
    }
    return hit.policy;
  }

  private refreshAll(): void {
    const now = this.clock();
    for (const [tenantId, cached] of this.cache) {
      if (now - cached.usedAt > KEEP_UNUSED_MS) this.cache.delete(tenantId);
      else this.load(tenantId).catch((err: unknown) => this.report(err, "tenant policy not reloaded"));
    }
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
      const { policy, errors } = compileStored(record);
      if (errors.length > 0) {
        this.report(
          new Error(errors.join("; ")),
          `stored policy v${record?.version} of ${tenantId} is invalid`,
        );
      }
      const now = this.clock();
      this.cache.set(tenantId, { policy, loadedAt: now, usedAt: this.cache.get(tenantId)?.usedAt ?? now });
      return policy;
    })().finally(() => this.loading.delete(tenantId));
    this.loading.set(tenantId, promise);
    return promise;
  }
}
