import type { AgentKeyRecord, AgentOperatorRecord, Store } from "../store/interfaces.js";
import { signatureCheckFor } from "./agentKeys.js";
import { type DirectoryLimits, type DirectoryResult, fetchKeyDirectory } from "./keyDirectory.js";
import {
  type AmbiguousAgentKey,
  DEFAULT_MAX_SIGNATURE_VALIDITY_SECONDS,
  type KeyLookup,
  type KnownAgentKey,
} from "./verifyAgent.js";

export interface DirectorySettings {
  /** Whether operators registered with --fetch-directory have their directory fetched at all. */
  enabled: boolean;
  limits: DirectoryLimits;
  /** Bounds on how long a fetched directory is trusted (its Cache-Control max-age is clamped to these). */
  minTtlSeconds: number;
  maxTtlSeconds: number;
}

/** What the registry applies to every key's signatures. */
export interface SignatureSettings {
  /** The longest created-to-expires window accepted (WARDEN_AGENT_SIGNATURE_MAX_VALIDITY_SECONDS). */
  maxValiditySeconds: number;
}

const AMBIGUOUS: AmbiguousAgentKey = Object.freeze({ ambiguous: true });

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
 *
 * A key names one operator. A stored key (`warden agent add --jwks`, which the store keeps to one
 * operator) is its operator's whatever any directory serves: a directory that also serves it gets
 * nothing for it. A key that only directories serve belongs to its one directory; served by two, or
 * stored for two, it identifies nobody. The answer depends on the store and the directories alone,
 * not on which fetch finished first, so every process gives the same one. Each conflict is reported
 * once, when it appears.
 */
export class AgentRegistry {
  private byKeyid = new Map<string, KnownAgentKey | AmbiguousAgentKey>();
  private conflicts = new Set<string>();
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
    private readonly signatures: SignatureSettings = {
      maxValiditySeconds: DEFAULT_MAX_SIGNATURE_VALIDITY_SECONDS,
    },
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
    const claims = new Map<string, Claim[]>();
    for (const op of this.operators) {
      const fetched = op.fetchDirectory ? (this.directories.get(op.operator)?.keys ?? []) : [];
      for (const [stored, keys] of [
        [true, op.keys],
        [false, fetched],
      ] as const) {
        for (const key of keys) {
          const list = claims.get(key.thumbprint) ?? [];
          // An operator's own key, stored and in its directory too, is one claim (the stored one).
          if (!list.some((c) => c.op === op)) list.push({ op, key, stored });
          claims.set(key.thumbprint, list);
        }
      }
    }
    const next = new Map<string, KnownAgentKey | AmbiguousAgentKey>();
    const conflicts = new Set<string>();
    for (const [thumbprint, list] of claims) {
      const stored = list.filter((c) => c.stored);
      const owners = stored.length > 0 ? stored : list;
      const names = (cs: Claim[]) => cs.map((c) => c.op.operator).join(", ");
      if (owners.length > 1) {
        next.set(thumbprint, AMBIGUOUS);
        conflicts.add(
          `agent key ${thumbprint} is ${stored.length > 0 ? "registered" : "served by the key directories"} for several operators (${names(owners)}): it identifies none of them until only one has it`,
        );
        continue;
      }
      const [owner] = owners;
      if (!owner) continue;
      const ignored = list.filter((c) => c !== owner);
      if (ignored.length > 0) {
        conflicts.add(
          `agent key ${thumbprint} is registered for ${owner.op.operator}; the key directory of ${names(ignored)} also serves it and is not trusted for it`,
        );
      }
      try {
        next.set(thumbprint, {
          operator: owner.op.operator,
          signatureAgent: owner.op.signatureAgent,
          alg: owner.key.alg,
          check: signatureCheckFor(owner.key.jwk, owner.key.alg),
          maxValiditySeconds: this.signatures.maxValiditySeconds,
        });
      } catch (err) {
        this.report(err, `agent key ${thumbprint} of ${owner.op.operator} is unusable`);
      }
    }
    for (const conflict of conflicts) {
      if (!this.conflicts.has(conflict)) this.report(new Error(conflict), "agent key conflict");
    }
    this.conflicts = conflicts;
    this.byKeyid = next;
  }
}

interface Claim {
  op: AgentOperatorRecord;
  key: AgentKeyRecord;
  /** Given with --jwks (kept in the store), rather than served by the operator's key directory. */
  stored: boolean;
}
