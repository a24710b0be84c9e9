import { validateTenantId } from "../admin/apiKeys.js";
import type { Config } from "../config.js";
import type { Store } from "../store/interfaces.js";

/** Bad arguments: printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

export interface Command {
  usage: string;
  summary: string;
  options: Record<string, { type: "string" | "boolean" }>;
  positionals: number;
  run(
    args: { values: Record<string, string | boolean | undefined>; positionals: string[] },
    ctx: Context,
  ): Promise<number>;
}

export interface Context {
  io: Io;
  config: () => Config;
  /** Opens the store with a patient timeout (administration is not on a request deadline). */
  withStore<T>(fn: (store: Store) => Promise<T>): Promise<T>;
  /**
   * The certificates key directories are checked against instead of Node's trusted ones, for a run
   * inside another process (tests): the `warden` binary takes extra ones from NODE_EXTRA_CA_CERTS.
   */
  directoryCa?: string;
}

export const str = (v: string | boolean | undefined): string | undefined =>
  typeof v === "string" ? v : undefined;

export function requireTenant(value: string | undefined): string {
  if (value === undefined) throw new UsageError("--tenant <tenantId> is required");
  const problem = validateTenantId(value);
  if (problem) throw new UsageError(problem);
  return value;
}
