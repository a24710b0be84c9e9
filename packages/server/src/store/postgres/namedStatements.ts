import pg from "pg";
import { sha256Hex } from "../../lib/crypto.js";

/**
 * The verify hot path's statements as named prepared statements. Sent unnamed, PostgreSQL parses and
 * plans each one on every execution; at verify's rates that was most of the database's time per
 * verify (parse and bind 0.32 of the hot statements' 0.49 ms, measured from the server's statement
 * log). Named, each connection parses a statement once and reuses its plan.
 *
 * Only texts registered here are named: the hot statements are fixed shapes (precompiled.ts), so the
 * set is small and bounded; every other query stays unnamed. A connection prepares a statement on
 * its first use (node-postgres keeps the names it prepared per connection).
 */
export class NamedStatements {
  readonly #names = new Map<string, string>();

  /**
   * Registers `text` as a hot statement (idempotent). Its name is a hash of its text, so every process
   * gives one statement one name whatever order it met its statements in: behind a pooler that
   * shares server connections between processes (PgBouncer in transaction mode with
   * max_prepared_statements), numbering them in order named different statements alike ("prepared
   * statement warden_hot_3 already exists").
   */
  register(text: string): void {
    if (!this.#names.has(text)) this.#names.set(text, `warden_${sha256Hex(text).slice(0, 24)}`);
  }

  /** The name a registered text runs under (tests). */
  nameOf(text: string): string | undefined {
    return this.#names.get(text);
  }

  /** The pg.Client class a pool uses so that registered texts run as their named statements. */
  clientClass(): typeof pg.Client {
    const names = this.#names;
    return class NamingClient extends pg.Client {
      // biome-ignore lint/suspicious/noExplicitAny: pg.Client.query has many overloads; this forwards them all.
      override query(config: any, values?: any, callback?: any): any {
        const name = typeof config === "string" && Array.isArray(values) ? names.get(config) : undefined;
        return name === undefined
          ? super.query(config, values, callback)
          : super.query({ name, text: config, values }, callback);
      }
    } as typeof pg.Client;
  }
}
