import type { Config } from "./config.js";
import { DEFAULT_POLICY, type DecisionPolicy } from "./operations/verify/policy.js";
import type { Store } from "./store/interfaces.js";
import { openPostgresStore } from "./store/postgres/postgresStore.js";
import { openSqliteStore, sqliteFileFromUrl } from "./store/sqlite/sqliteStore.js";
import { SigningKeyring } from "./tokens/signingKeys.js";

/** Everything the app needs from the outside, built once in one place (main, CLI, tests). */
export interface Deps {
  config: Config;
  store: Store;
  keyring: SigningKeyring;
  policy: DecisionPolicy;
  clock: () => number;
}

/** Opens the store named by the configuration. `storeTimeoutMs` overrides the request-path deadline (CLI). */
export async function openStore(config: Config, storeTimeoutMs = config.storeTimeoutMs): Promise<Store> {
  if (config.databaseUrl.startsWith("sqlite:")) {
    return openSqliteStore({ file: sqliteFileFromUrl(config.databaseUrl), busyTimeoutMs: storeTimeoutMs });
  }
  return openPostgresStore({
    url: config.databaseUrl,
    statementTimeoutMs: storeTimeoutMs,
    poolSize: config.pgPoolSize,
  });
}

export async function buildDeps(
  config: Config,
  store?: Store,
  clock: () => number = Date.now,
): Promise<Deps> {
  const opened = store ?? (await openStore(config));
  const keyring = new SigningKeyring(opened, config.signingKeyRefreshSeconds, clock);
  await keyring.start();
  return { config, store: opened, keyring, policy: DEFAULT_POLICY, clock };
}

export async function closeDeps(deps: Deps): Promise<void> {
  deps.keyring.stop();
  await deps.store.close();
}
