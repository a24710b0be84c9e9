/**
 * Table shapes shared by every SQL adapter. Times are epoch milliseconds; booleans are 0/1 integers
 * and JSON is text, so one set of migrations serves SQLite and PostgreSQL.
 */
export interface Database {
  tenants: {
    id: string;
    raw_pii: number;
    log_only: number;
    created_at: number;
    payment_secret_key: string | null;
  };
  api_keys: {
    id: string;
    tenant_id: string;
    key_hash: string;
    scopes: string;
    log_only: number;
    created_at: number;
    revoked_at: number | null;
  };
  signing_keys: {
    kid: string;
    private_jwk: string;
    public_jwk: string;
    created_at: number;
    retired_at: number | null;
    publish_until: number | null;
  };
  counters: { expires_at: number; name: string; count: number };
  /** One row rewritten by the PostgreSQL readiness probe. */
  readiness_probe: { id: number; probed_at: number };
  events: {
    id: string;
    tenant_id: string;
    key_id: string;
    created_at: number;
    action: string;
    surface: string | null;
    session: string | null;
    decision: string;
    would_be_decision: string;
    actor_type: string;
    confidence: number;
    reasons: string;
    degraded: number;
    enforcement_mode: string;
    costs: string;
    signals: string;
    engine_version: string;
    policy_version: string;
    attempt: string | null;
    decided_by: string;
    risk_estimate: number | null;
    risk_low: number | null;
    risk_high: number | null;
    risk_raised: number;
    /** What the console searches by (0012_event_search): the signals' email hash and network. */
    email_hash: string | null;
    network: string | null;
    /** The verdict's reason codes as a JSON array of text; null for events recorded before 0012. */
    reason_codes: string | null;
  };
  feedback: {
    feedback_id: string;
    tenant_id: string;
    event_id: string;
    identity: string;
    outcome: string;
    value: number | null;
    unit: string | null;
    source: string | null;
    observed_at: number;
    received_at: number;
    status: string;
    conflicts_with: string | null;
    seq: number;
  };
  /** Append-only: one row per resolved quarantined observation (migration 0011). */
  feedback_resolutions: {
    tenant_id: string;
    feedback_id: string;
    event_id: string;
    resolution: string;
    note: string | null;
    key_id: string;
    resolved_at: number;
    /** JSON array of the feedbackIds an accept superseded. */
    superseded: string;
  };
  challenges: {
    id: string;
    tenant_id: string;
    event_id: string;
    session: string;
    method: string;
    difficulty: number | null;
    seed: string | null;
    instructions: string;
    issued_at: number;
    expires_at: number;
    cleared_at: number | null;
    redeemed_at: number | null;
    proof_ref: string | null;
    completion_key: string | null;
    attempt: string | null;
    event_degraded: number;
  };
  event_clears: {
    tenant_id: string;
    event_id: string;
    challenge_id: string;
    redeemed_at: number;
    /** The re-verify whose event redeemed the clear (null for clears redeemed before 0013 it could not find). */
    reverify_event_id: string | null;
  };
  agent_operators: {
    operator: string;
    signature_agent: string;
    keys: string;
    fetch_directory: number;
    created_at: number;
    updated_at: number;
  };
  tenant_policies: {
    tenant_id: string;
    version: number;
    document: string;
    created_at: number;
  };
  /** Operator console sign-ins: the SHA-256 of the cookie's secret, never the secret. */
  console_sessions: {
    id_hash: string;
    tenant_id: string;
    key_id: string;
    created_at: number;
    expires_at: number;
  };
  idempotency: {
    tenant_id: string;
    operation: string;
    key: string;
    fingerprint: string;
    status_code: number;
    body: string;
    created_at: number;
    expires_at: number;
    /** The event the stored answer replays (0014): verify's and feedback's; null for other answers. */
    event_id: string | null;
  };
  /**
   * Erasures remembered for a while (0018): a degraded event of the erased subject created before
   * the erasure and written after it (a spool restored, a queue flushed) is not written.
   */
  erasures: {
    tenant_id: string;
    /** email_hash, network, session or event */
    kind: string;
    /** A one-way digest of the erased value (store/contract/removal.ts, erasedDigest), never the value. */
    value: string;
    erased_at: number;
  };
}
