/**
 * How this process's verify answers went over the last minute, second by second: how many, and how
 * many were degraded. Readiness (GET /readyz/store) and the degraded-share gauge read it, so that an
 * operator's probe says what verify is answering, not only whether the store takes a probe's write:
 * a schema the running code cannot write, a role without the rights, locks or host contention show
 * as degraded answers long before they show anywhere else.
 */
export interface VerdictCounts {
  answers: number;
  degraded: number;
}

/**
 * Verify is called unhealthy when most of at least `minAnswers` answers in `windowSeconds` were
 * degraded and it still answers degraded (one in the last `stillSeconds`): once the store is back and
 * no answer is degraded any more, the probe's own write decides again, without waiting out the window.
 */
export const UNHEALTHY_VERIFY = Object.freeze({
  windowSeconds: 30,
  minAnswers: 20,
  share: 0.5,
  stillSeconds: 5,
});

const SECONDS = 60;

export class RecentVerdicts {
  private readonly second = new Float64Array(SECONDS).fill(-1);
  private readonly answers = new Uint32Array(SECONDS);
  private readonly degraded = new Uint32Array(SECONDS);

  constructor(private readonly now: () => number = Date.now) {}

  record(degraded: boolean): void {
    const s = Math.floor(this.now() / 1000);
    const i = s % SECONDS;
    if (this.second[i] !== s) {
      this.second[i] = s;
      this.answers[i] = 0;
      this.degraded[i] = 0;
    }
    this.answers[i] = (this.answers[i] ?? 0) + 1;
    if (degraded) this.degraded[i] = (this.degraded[i] ?? 0) + 1;
  }

  /** The answers of the last `windowSeconds` (at most 60), this second included. */
  over(windowSeconds: number): VerdictCounts {
    const now = Math.floor(this.now() / 1000);
    const out = { answers: 0, degraded: 0 };
    for (let i = 0; i < SECONDS; i++) {
      const s = this.second[i] as number;
      if (s > now - Math.min(windowSeconds, SECONDS) && s <= now) {
        out.answers += this.answers[i] ?? 0;
        out.degraded += this.degraded[i] ?? 0;
      }
    }
    return out;
  }

  /** Whether most of the recent answers were degraded (UNHEALTHY_VERIFY), with the counts. */
  unhealthy(): { unhealthy: boolean; counts: VerdictCounts } {
    const counts = this.over(UNHEALTHY_VERIFY.windowSeconds);
    return {
      unhealthy:
        counts.answers >= UNHEALTHY_VERIFY.minAnswers &&
        counts.degraded > counts.answers * UNHEALTHY_VERIFY.share &&
        this.over(UNHEALTHY_VERIFY.stillSeconds).degraded > 0,
      counts,
    };
  }

  reset(): void {
    this.second.fill(-1);
  }
}
