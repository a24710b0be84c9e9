/**
 * Re-verifies redeeming a clear of one event in this process at once (one clear per attempt, from
 * any of the event's challenges). The first (the leader) asks the store; the others follow it and
 * wait for its outcome:
 * honoured, and they are refused as used without a transaction each (20 concurrent re-verifies of one
 * clear otherwise queue 20 redemptions on the database, past verify's deadline); not honoured
 * (refused, degraded), and the next one tries. Across processes the store's conditional redemption
 * (events.record) still decides; this only spares it the crowd.
 */
export class ClearsInFlight {
  private readonly pending = new Map<string, Promise<boolean>>();
  private readonly leaders = new Map<string, Promise<void>>();
  /** Events whose clear a re-verify here redeemed lately, oldest first (bounded: HONOURED_KEPT). */
  private readonly honoured = new Map<string, number>();

  /**
   * The re-verify of `challengeId` in flight in this process that leads, if one does: the others
   * follow it, waiting until it has settled the clear (redeemed it, found it used or unusable, or finished) before touching the
   * store, so that of a crowd of re-verifies of one clear only the first competes for the database
   * (and, across processes, with the other processes' first): the one that can be honoured is not
   * queued behind copies that cannot.
   */
  leaderOf(tenantId: string, challengeId: string): Promise<void> | undefined {
    return this.leaders.get(slot(tenantId, challengeId));
  }

  /**
   * Makes the caller the leader of the re-verifies of `challengeId`; it calls the result (stop
   * leading) once it has settled the clear, and those that follow it go on.
   */
  lead(tenantId: string, challengeId: string): () => void {
    const at = slot(tenantId, challengeId);
    let settle = () => {};
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    this.leaders.set(at, settled);
    return () => {
      settle();
      if (this.leaders.get(at) === settled) this.leaders.delete(at);
    };
  }

  /** Whether the redemption in flight for the event was honoured, if one is in flight. */
  of(tenantId: string, eventId: string): Promise<boolean> | undefined {
    return this.pending.get(slot(tenantId, eventId));
  }

  /**
   * Whether a re-verify in this process redeemed the event's clear within the last HONOURED_MS: a
   * crowd's later arrivals are refused as used without asking the store (which would refuse them too).
   */
  wasHonoured(tenantId: string, eventId: string, now: number): boolean {
    const at = this.honoured.get(slot(tenantId, eventId));
    return at !== undefined && now - at < HONOURED_MS;
  }

  /** Records `honoured` as the redemption in flight for the event until it settles. */
  track(tenantId: string, eventId: string, honoured: Promise<boolean>, now: () => number = Date.now): void {
    const at = slot(tenantId, eventId);
    this.pending.set(at, honoured);
    void honoured.then((yes) => {
      if (this.pending.get(at) === honoured) this.pending.delete(at);
      if (!yes) return;
      this.honoured.delete(at);
      this.honoured.set(at, now());
      if (this.honoured.size > HONOURED_KEPT) {
        const oldest = this.honoured.keys().next().value;
        if (oldest !== undefined) this.honoured.delete(oldest);
      }
    });
  }

  get size(): number {
    return this.pending.size + this.leaders.size;
  }
}

const slot = (tenantId: string, eventId: string): string => `${tenantId}\n${eventId}`;

/** How long an honoured redemption is remembered, and for how many events at most. */
const HONOURED_MS = 60_000;
const HONOURED_KEPT = 10_000;
