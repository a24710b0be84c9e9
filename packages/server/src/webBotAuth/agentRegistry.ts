import type { AgentKeyRecord, AgentOperatorRecord, Store } from "../store/interfaces.js";
import { signatureCheckFor } from "./agentKeys.js";
import { type DirectoryLimits, type DirectoryResult, fetchKeyDirectory } from "./keyDirectory.js";
import type { KeyLookup, KnownAgentKey } from "./verifyAgent.js";

export interface DirectorySettings {
  /** Whether operators registered with --fetch-directory have their directory fetched at all. */
  enabled: boolean;
  limits: DirectoryLimits;
  /** Bounds on how long a fetched directory is trusted (its Cache-Control max-age is clamped to these). */
  minTtlSeconds: number;
  maxTtlSeconds: number;
}

interface CachedDirectory {
  keys: AgentKeyRecord[];
  expiresAt: number;
  /** After a failed fetch, the next try waits until then (the last good keys stay in use). */
  retryAt: number;
}

/**
 * The process's view of the agent-operator registry: keyid (JWK thumbprint) → operator and key.
 * Verify reads it synchronously; it is rebuilt from the store every `refreshSeconds`, and key
 * directories are fetched in the background, never on a request's path. When the store is down the
 * last view stays in use.
 */
export class AgentRegistry {
  private byKeyid = new Map<string, KnownAgentKey>();
  private directories = new Map<string, CachedDirectory>();
  private operators: AgentOperatorRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private fetching = new Map<string, Promise<DirectoryResult>>();
  /** Where background failures go; the app points it at its logger. */
  report: (err: unknown, what: string) => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly refreshSeconds: number,
    private readonly directory: DirectorySettings,
    private readonly clock: () => number = Date.now,
    private readonly fetchDirectory: (
      url: string,
      limits: DirectoryLimits,
    ) => Promise<DirectoryResult> = fetchKeyDirectory,
  ) {}

  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => {
      this.reload().catch((err: unknown) => this.report(err, "agent registry not reloaded"));
    }, this.refreshSeconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  readonly lookup: KeyLookup = (keyid) => this.byKeyid.get(keyid);

  async reload(): Promise<void> {
    this.operators = await this.store.agents.list();
    this.rebuild();
    if (this.directory.enabled) {
      const now = this.clock();
      for (const op of this.operators) {
        const cached = this.directories.get(op.operator);
        if (op.fetchDirectory && (!cached || (cached.expiresAt <= now && cached.retryAt <= now))) {
          void this.refreshDirectory(op);
        }
      }
    }
  }

  /** Fetches one operator's directory now; a fetch already running for it is joined, not repeated. */
  refreshDirectory(op: AgentOperatorRecord): Promise<DirectoryResult> {
    const running = this.fetching.get(op.operator);
    if (running) return running;
    const fetching = this.fetchAndCache(op).finally(() => this.fetching.delete(op.operator));
    this.fetching.set(op.operator, fetching);
    return fetching;
  }

  private async fetchAndCache(op: AgentOperatorRecord): Promise<DirectoryResult> {
    const result = await this.fetchDirectory(op.signatureAgent, this.directory.limits);
    const now = this.clock();
    const previous = this.directories.get(op.operator);
    if (result.ok) {
      const ttl = Math.min(
        this.directory.maxTtlSeconds,
        Math.max(this.directory.minTtlSeconds, result.maxAgeSeconds ?? this.directory.maxTtlSeconds),
      );
      this.directories.set(op.operator, { keys: result.keys, expiresAt: now + ttl * 1000, retryAt: now });
    } else {
      this.report(new Error(result.message), `key directory of ${op.operator} not fetched`);
      this.directories.set(op.operator, {
        keys: previous?.keys ?? [],
        expiresAt: previous?.expiresAt ?? now,
        retryAt: now + this.directory.minTtlSeconds * 1000,
      });
    }
    this.rebuild();
    return result;
  }

  private rebuild(): void {
    const next = new Map<string, KnownAgentKey>();
    for (const op of this.operators) {
      const fetched = op.fetchDirectory ? (this.directories.get(op.operator)?.keys ?? []) : [];
      for (const k of [...op.keys, ...fetched]) {
        if (next.has(k.thumbprint)) continue;
        try {
          next.set(k.thumbprint, {
            operator: op.operator,
            signatureAgent: op.signatureAgent,
            alg: k.alg,
            check: signatureCheckFor(k.jwk, k.alg),
          });
        } catch (err) {
          this.report(err, `agent key ${k.thumbprint} of ${op.operator} is unusable`);
        }
      }
    }
    this.byKeyid = next;
  }
}
