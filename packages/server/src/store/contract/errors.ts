/**
 * The store's faults: every method may reject with StoreUnavailableError when the database cannot
 * answer in time.
 */

export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/**
 * The database answered and refused this write for what it holds (a constraint, a value it cannot
 * store): trying it again cannot succeed. A StoreUnavailableError still, so request paths answer it
 * like any store fault; queues that retry (the degraded-event queue) drop it instead of retrying.
 */
export class StoreRejectedError extends StoreUnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreRejectedError";
  }
}
