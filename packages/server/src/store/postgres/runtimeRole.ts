import { type Kysely, sql } from "kysely";
import { COMPATIBILITY_TABLE } from "../schemaCompatibility.js";
import { PARTITIONS_FUNCTION } from "./eventPartitions.js";

/** Tables the runtime role reads and never writes: the migrations' bookkeeping and the schema's floor. */
const READ_ONLY_TABLES = ["kysely_migration", "kysely_migration_lock", COMPATIBILITY_TABLE] as const;

/**
 * What `warden serve --no-migrate` needs of the role it runs as, granted by the schema's owner
 * (`warden migrate --runtime-role <role>`) in the schema it migrates: rows of every table (read only
 * for READ_ONLY_TABLES), the owner's function that makes the coming weeks' partitions, and, by
 * default privileges, rows of every table the owner creates later (those partitions, a later
 * release's tables). No DDL: the role cannot alter, drop or create tables. Idempotent.
 */
export async function grantRuntimeRole(db: Kysely<unknown>, role: string): Promise<void> {
  const { rows } = await sql<{ schema: string; exists: boolean }>`
    select current_schema() as schema, exists (select 1 from pg_roles where rolname = ${role}) as exists`.execute(
    db,
  );
  const schema = rows[0]?.schema;
  if (schema === undefined || rows[0]?.exists !== true) {
    throw new Error(`the runtime role ${role} does not exist: create it first (docs/deployment.md, "Roles")`);
  }
  const grantee = sql.id(role);
  const here = sql.id(schema);
  await sql`grant usage on schema ${here} to ${grantee}`.execute(db);
  await sql`grant select, insert, update, delete on all tables in schema ${here} to ${grantee}`.execute(db);
  for (const table of READ_ONLY_TABLES) {
    await sql`revoke insert, update, delete, truncate on ${sql.table(table)} from ${grantee}`.execute(db);
  }
  await sql`grant execute on function ${sql.id(PARTITIONS_FUNCTION)}(bigint) to ${grantee}`.execute(db);
  await sql`alter default privileges in schema ${here} grant select, insert, update, delete on tables to ${grantee}`.execute(
    db,
  );
}
