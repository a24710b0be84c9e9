/**
 * The store contract, the agent registry of Web Bot Auth operators (AgentStore). Each method states
 * its guarantees; "atomic" is as store/interfaces.ts defines it.
 */

/** A public key of an agent operator: its JWK (public members only) and RFC 7638 SHA-256 thumbprint. */
export interface AgentKeyRecord {
  thumbprint: string;
  alg: "ed25519" | "rsa-pss-sha512";
  jwk: Record<string, unknown>;
}

/** A known agent operator (Web Bot Auth): the registry is global, shared by every tenant. */
export interface AgentOperatorRecord {
  operator: string;
  /** The Signature-Agent URL the operator's requests carry. */
  signatureAgent: string;
  /** Keys given by the operator (a JWKS file); empty when only its key directory is used. */
  keys: AgentKeyRecord[];
  /** Whether Warden may fetch the operator's key directory for keys not given here. */
  fetchDirectory: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A put refused because one of its keys is already another operator's (a key names one operator). */
export type AgentPutResult = { ok: true } | { ok: false; thumbprint: string; operator: string };

export interface AgentStore {
  /**
   * Atomic: creates the operator's entry or replaces it (createdAt is kept on replace), unless one of
   * its keys is stored for another operator; then nothing is written. Concurrent puts of one key for
   * two operators store it for one of them.
   */
  put(record: AgentOperatorRecord): Promise<AgentPutResult>;
  /** Resolves false when no such operator is registered. */
  remove(operator: string): Promise<boolean>;
  list(): Promise<AgentOperatorRecord[]>;
}
