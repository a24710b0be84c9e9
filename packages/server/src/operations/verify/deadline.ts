import type { WriteSignal } from "../../store/interfaces.js";

/** Verify's first rule: an answer within its deadline, the degraded challenge past it (docs/api.md#degradation). */
class DeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`verify deadline of ${ms} ms exceeded`);
    this.name = "DeadlineExceeded";
  }
}

/**
 * Verify's hold on its writes (store WriteSignal). Until the store reaches the point where its write
 * becomes irreversible, the deadline may pass: the write is abandoned and the answer is the degraded
 * challenge. Once the store has committed to the write, the deadline no longer answers: verify waits
 * for the write's outcome (bounded by the store's own statement timeouts), so no answer goes out while
 * a write that contradicts it can still commit (a degraded answer with a recorded event and
 * idempotent answer behind it). A plain object: an AbortController per verify cost more than the
 * check it serves.
 */
export class Cancellation implements WriteSignal {
  aborted = false;
  committing = false;
  commit(): boolean {
    if (this.aborted) return false;
    this.committing = true;
    return true;
  }
}

/** `work`'s result, or DeadlineExceeded after `ms` unless a write is already committing. */
export async function withDeadline<T>(ms: number, cancel: Cancellation, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      if (cancel.committing) return;
      cancel.aborted = true;
      reject(new DeadlineExceeded(ms));
    }, ms);
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
