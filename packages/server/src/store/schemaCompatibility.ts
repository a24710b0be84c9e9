import { type Kysely, sql } from "kysely";
import { StoreUnavailableError } from "./interfaces.js";

/**
 * Which builds may serve from a schema (docs/deployment.md, "Upgrading"). Migrations expand: a
 * release adds tables, columns and functions the previous release ignores, so the previous release's
 * processes keep scoring while the new one rolls out, and the previous release runs again on the new
 * schema for a rollback. A change the previous release's statements cannot survive (a column it
 * writes removed, a key its ON CONFLICT names replaced) contracts, in a later release, and its
 * migration raises the schema's floor to a migration the contracting build knows:
 *
 *   update schema_compatibility set oldest_build_knows = '00NN_…' where id = 1
 *
 * A build that does not know the floor's migration refuses to start, and a running one that finds
 * it raised answers 503 on /readyz and /readyz/store (a balancer takes it out of rotation) with an
 * error line in its log, instead of answering every verify with the degraded challenge.
 */
export const COMPATIBILITY_TABLE = "schema_compatibility";

/** The schema is newer than this build can serve: a later release contracted what this one needs. */
export class SchemaAheadError extends StoreUnavailableError {}

/**
 * Throws SchemaAheadError when the schema's floor names a migration `known` (this build's
 * migrations) lacks. A schema from before the floor's table has no floor: any build may serve it.
 */
export async function requireServableSchema(db: Kysely<unknown>, known: readonly string[]): Promise<void> {
  const floor = await schemaFloor(db);
  if (floor === undefined || known.includes(floor)) return;
  throw new SchemaAheadError(
    `the database schema is newer than this build of Warden can serve: it needs a build that knows migration ${floor} (this one's last is ${known.at(-1) ?? "none"}); start the newer release, or restore the database from before its migration`,
  );
}

/** The migration a build must know to serve from this schema, or undefined when the schema sets none. */
export async function schemaFloor(db: Kysely<unknown>): Promise<string | undefined> {
  try {
    const { rows } = await sql<{
      floor: string;
    }>`select oldest_build_knows as floor from ${sql.table(COMPATIBILITY_TABLE)} where id = 1`.execute(db);
    return rows[0]?.floor;
  } catch (err) {
    if (missingTable(err)) return undefined;
    throw err;
  }
}

/**
 * The migrations the database has run that `known` (this build's) lacks: a newer release's, when
 * this one is a rollback or an older process beside it.
 */
export async function unknownExecutedMigrations(
  db: Kysely<unknown>,
  known: readonly string[],
): Promise<string[]> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    return rows.map((r) => r.name).filter((name) => !known.includes(name));
  } catch (err) {
    if (missingTable(err)) return [];
    throw err;
  }
}

/** PostgreSQL's undefined_table (42P01); SQLite's "no such table". */
function missingTable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "42P01" || (err instanceof Error && /no such table/.test(err.message));
}
