import type { ApiKeyRecord, Tenant } from "../store/interfaces.js";

/** The authenticated caller of an operation: the API key and its tenant. */
export interface Caller {
  tenant: Tenant;
  key: ApiKeyRecord;
}
