/**
 * Re-verifies redeeming one challenge's clear in this process at once. The first asks the store; the
 * others wait for its outcome: honoured, and they are refused as used without a transaction each
 * (20 concurrent re-verifies of one clear otherwise queue 20 redemptions on the database, past verify's
 * deadline); not honoured (refused, degraded), and the next one tries. Across processes the store's
 * conditional redemption (events.record) still decides; this only spares it the crowd.
 */
export class ClearsInFlight {
  private readonly pending = new Map<string, Promise<boolean>>();

  /** Whether the redemption in flight for the challenge was honoured, if one is in flight. */
  of(tenantId: string, challengeId: string): Promise<boolean> | undefined {
    return this.pending.get(slot(tenantId, challengeId));
  }

  /** Records `honoured` as the redemption in flight for the challenge until it settles. */
  track(tenantId: string, challengeId: string, honoured: Promise<boolean>): void {
    const at = slot(tenantId, challengeId);
    this.pending.set(at, honoured);
    void honoured.then(() => {
      if (this.pending.get(at) === honoured) this.pending.delete(at);
    });
  }

  get size(): number {
    return this.pending.size;
  }
}

const slot = (tenantId: string, challengeId: string): string => `${tenantId}\n${challengeId}`;
