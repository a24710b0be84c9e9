/**
 * The console's expensive reads (a scan of every event of a period), kept for a few seconds per
 * tenant and period: moving a what-if slider, or going from outcomes to calibration, replays the same
 * groups instead of scanning a million events again. Concurrent asks for one key share one read; a
 * failed read is not kept. Figures are therefore at most `ttlMs` old.
 */
export class ReadCache {
  private readonly entries = new Map<string, { at: number; value: Promise<unknown> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
    private readonly clock: () => number,
  ) {}

  get<T>(key: string, read: () => Promise<T>): Promise<T> {
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value as Promise<T>;
    const value = read();
    this.entries.delete(key);
    this.entries.set(key, { at: now, value });
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return value;
  }
}
