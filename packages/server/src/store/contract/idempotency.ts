/**
 * The store contract, answers stored under an idempotency key (IdempotencyStore; events.record and
 * feedback.append write them). Each method states its guarantees; "atomic" is as
 * store/interfaces.ts defines it.
 */

export interface IdempotentResponse {
  fingerprint: string;
  statusCode: number;
  body: unknown;
}

export interface IdempotencyKey {
  tenantId: string;
  operation: string;
  key: string;
}

export interface IdempotencyStore {
  /** The live response stored under the key, if any (a read-only fast path; `record` decides races). */
  find(key: IdempotencyKey, now: number): Promise<IdempotentResponse | undefined>;
  purgeExpired(now: number): Promise<number>;
}
