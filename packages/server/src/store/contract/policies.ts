/**
 * The store contract, tenant policy versions (PolicyStore). Each method states its guarantees;
 * "atomic" is as store/interfaces.ts defines it.
 */

/** One version of a tenant's policy document (validated before it is stored). */
export interface TenantPolicyRecord {
  tenantId: string;
  version: number;
  /** The document as JSON text, exactly as validated. */
  document: string;
  createdAt: number;
}

export interface PolicyStore {
  /**
   * Atomic: stores `document` as the tenant's next version (one more than the highest), so concurrent
   * sets from several processes get distinct versions and none is lost. Resolves the version.
   */
  put(tenantId: string, document: string, now: number): Promise<number>;
  /**
   * Atomic: stores `document` as version `basedOn + 1` only while the tenant's highest version is
   * `basedOn` (0: it never set one), so a change made from a version read earlier never overwrites
   * one stored since. Resolves the new version, or undefined when the tenant's version is not `basedOn`.
   */
  putIfCurrent(tenantId: string, document: string, basedOn: number, now: number): Promise<number | undefined>;
  /** The tenant's highest version, if it ever set one. */
  current(tenantId: string): Promise<TenantPolicyRecord | undefined>;
}
