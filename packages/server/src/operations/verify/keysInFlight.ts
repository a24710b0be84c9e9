/**
 * Verifies with one idempotency key that are in flight in this process at once. The first one (the
 * leader) does the work; the others follow it: they wait for its answer and replay it, or conflict with it, without
 * queueing on the store's lock for the key: 50 concurrent retries of one request then cost one
 * verify, not 50 waits that each risk the deadline and a degraded answer (with an event of its own).
 * Across processes the store's claim of the key (events.record) still decides; this only spares it
 * the crowd.
 */
export interface Leader<R> {
  fingerprint: string;
  answer: Promise<R>;
}

export class KeysInFlight<R> {
  private readonly leaders = new Map<string, Leader<R>>();

  /** The leader for `tenantId`'s `key`, if one is in flight. */
  leaderOf(tenantId: string, key: string): Leader<R> | undefined {
    return this.leaders.get(slot(tenantId, key));
  }

  /** Makes `answer` the leader for the key until it settles. */
  lead(tenantId: string, key: string, fingerprint: string, answer: Promise<R>): void {
    const at = slot(tenantId, key);
    const leader = { fingerprint, answer };
    this.leaders.set(at, leader);
    const done = () => {
      if (this.leaders.get(at) === leader) this.leaders.delete(at);
    };
    answer.then(done, done);
  }

  get size(): number {
    return this.leaders.size;
  }
}

const slot = (tenantId: string, key: string): string => `${tenantId}\n${key}`;
