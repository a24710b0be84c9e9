import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import { storeContract } from "../../testing/storeContract.js";
import { openPostgresStore } from "./postgresStore.js";

const schema = await postgresSchemaOrSkip("store contract: postgres", "the PostgreSQL store contract suite");
if (schema) {
  const open = () =>
    openPostgresStore({ url: TEST_POSTGRES_URL, statementTimeoutMs: 5000, poolSize: 8, schema });
  // Two stores = two connection pools, as two Warden processes would have.
  storeContract("postgres", open, open);
}
