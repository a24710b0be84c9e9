/**
 * Re-verifies redeeming a clear of one event in this process at once (one clear per attempt, from
 * any of the event's challenges). The first asks the store; the others wait for its outcome:
 * honoured, and they are refused as used without a transaction each (20 concurrent re-verifies of one
 * clear otherwise queue 20 redemptions on the database, past verify's deadline); not honoured
 * (refused, degraded), and the next one tries. Across processes the store's conditional redemption
 * (events.record) still decides; this only spares it the crowd.
 */
export class ClearsInFlight {
  private readonly pending = new Map<string, Promise<boolean>>();
  private readonly reverifies = new Map<string, Promise<unknown>>();

  /**
   * The re-verify of `challengeId` in flight in this process, if one is: the others wait for it to
   * finish before touching the store, so that of a crowd of re-verifies of one clear only the first
   * competes for the database (and, across processes, with the other processes' first): the one
   * that can be honoured is not queued behind copies that cannot.
   */
  reverifyOf(tenantId: string, challengeId: string): Promise<unknown> | undefined {
    return this.reverifies.get(slot(tenantId, challengeId));
  }

  /** Makes `answer` the re-verify of `challengeId` in flight until it settles. */
  leadReverify(tenantId: string, challengeId: string, answer: Promise<unknown>): void {
    const at = slot(tenantId, challengeId);
    this.reverifies.set(at, answer);
    const done = () => {
      if (this.reverifies.get(at) === answer) this.reverifies.delete(at);
    };
    answer.then(done, done);
  }

  /** Whether the redemption in flight for the event was honoured, if one is in flight. */
  of(tenantId: string, eventId: string): Promise<boolean> | undefined {
    return this.pending.get(slot(tenantId, eventId));
  }

  /** Records `honoured` as the redemption in flight for the event until it settles. */
  track(tenantId: string, eventId: string, honoured: Promise<boolean>): void {
    const at = slot(tenantId, eventId);
    this.pending.set(at, honoured);
    void honoured.then(() => {
      if (this.pending.get(at) === honoured) this.pending.delete(at);
    });
  }

  get size(): number {
    return this.pending.size + this.reverifies.size;
  }
}

const slot = (tenantId: string, eventId: string): string => `${tenantId}\n${eventId}`;
