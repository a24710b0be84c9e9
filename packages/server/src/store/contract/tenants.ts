/**
 * The store contract, tenants (TenantStore). Each method states its guarantees; "atomic" is as
 * store/interfaces.ts defines it.
 */

export interface Tenant {
  id: string;
  rawPii: boolean;
  logOnly: boolean;
  createdAt: number;
}

export interface TenantStore {
  /** Atomic: creates the tenant; resolves false (and changes nothing) when the id exists. */
  create(tenant: Tenant): Promise<boolean>;
  get(id: string): Promise<Tenant | undefined>;
  list(): Promise<Tenant[]>;
  count(): Promise<number>;
  /** Sets (or with null removes) the tenant's payment-provider secret key; false for an unknown tenant. */
  setPaymentKey(id: string, secretKey: string | null): Promise<boolean>;
  /** The tenant's payment-provider secret key, if one is configured. */
  paymentKey(id: string): Promise<string | undefined>;
}
