import cluster from "node:cluster";
import type { FastifyInstance } from "fastify";
import { bootstrapDemoTenant, DEMO_TENANT, demoBanner, demoHint } from "./admin/bootstrap.js";
import { buildApp } from "./app.js";
import { runPrimary } from "./cluster/primary.js";
import { type WorkerChannel, workerChannel } from "./cluster/worker.js";
import type { Config } from "./config.js";
import { buildDeps, closeDeps, type Deps, duringStartup, openStore } from "./deps.js";
import { startHousekeeping } from "./housekeeping.js";
import { listenAdmin } from "./http/adminListener.js";
import { claimSpooledEvents, spoolEvents } from "./operations/verify/degradedSpool.js";

/** Degraded events an earlier process spooled at shutdown: queued for the store like new ones. */
async function restoreSpooledEvents(app: FastifyInstance, deps: Deps): Promise<void> {
  const dir = deps.config.degradedSpoolDir;
  try {
    const { events, unreadable } = await claimSpooledEvents(dir);
    if (unreadable > 0) app.log.error({ dir, unreadable }, "spooled degraded events unreadable: dropped");
    if (events.length === 0) return;
    deps.pendingEvents.restore(events);
    await deps.pendingEvents.flush();
    app.log.info(
      { dir, restored: events.length, waiting: deps.pendingEvents.size },
      "degraded events spooled by an earlier process queued for the store",
    );
  } catch (err) {
    app.log.error({ err, dir }, "spooled degraded events could not be read; they stay in the spool");
  }
}

/** After the drain: what the store did not take is written to the spool for the next process. */
async function spoolWaitingEvents(app: FastifyInstance, deps: Deps): Promise<void> {
  const left = deps.pendingEvents.takeAll();
  if (left.length === 0) return;
  try {
    const file = await spoolEvents(deps.config.degradedSpoolDir, left);
    app.log.warn({ file, events: left.length }, "degraded events not written to the store: spooled");
  } catch (err) {
    app.log.error({ err, lost: left.length }, "degraded events neither written nor spooled: lost");
  }
}

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** The admin listener's URL (metrics, docs, console) when WARDEN_ADMIN_PORT is set. */
  adminUrl: string | undefined;
  /**
   * Stops accepting, lets in-flight requests finish (at most WARDEN_SHUTDOWN_GRACE_MS), writes the
   * degraded events still waiting (at most 5 s; what the store does not take goes to the spool
   * directory), then closes the store.
   */
  close(): Promise<void>;
}

/** How `warden serve` starts: whether it migrates the schema, and whether it makes the demo tenant. */
export interface StartOptions {
  /** Bring the schema up to date first (default); false: refuse to start on an out-of-date schema. */
  migrate?: boolean;
  /** On a database with no tenant, create tenant `demo` and print a key with every scope (npm start). */
  demo?: boolean;
  /** This process is a worker of `warden serve --workers N`: its channel to the primary. */
  worker?: WorkerChannel;
}

export async function startServer(
  config: Config,
  print: (line: string) => void,
  options: StartOptions = {},
): Promise<RunningServer> {
  const deps = await buildDeps(config, await openStore(config, config.storeTimeoutMs, options));
  if (options.worker) deps.worker = options.worker;
  try {
    return await listening(config, deps, print, options.demo === true);
  } catch (err) {
    // Nothing of a failed start stays open (the caller exits non-zero).
    await closeDeps(deps).catch(() => undefined);
    throw err;
  }
}

async function listening(
  config: Config,
  deps: Deps,
  print: (line: string) => void,
  makeDemo: boolean,
): Promise<RunningServer> {
  const demo = makeDemo ? await bootstrapDemoTenant(deps.store, deps.clock()) : undefined;
  const app = await buildApp(deps);
  await app.ready();
  // Before listening, so the first requests neither open connections nor run cold code.
  const warm = await app.warmUp();
  if (warm.storeError !== undefined || warm.failed > 0) {
    app.log.warn(
      { err: warm.storeError, rehearsed: warm.rehearsed, failed: warm.failed, ms: warm.ms },
      "warm-up incomplete: the store did not answer; the first requests will be slower",
    );
  } else {
    app.log.info({ rehearsed: warm.rehearsed, ms: warm.ms }, "store connections opened and verify rehearsed");
  }
  await restoreSpooledEvents(app, deps);
  const housekeeping = startHousekeeping(deps, app.log);
  const url = await app.listen({ host: config.host, port: config.port });
  const admin =
    config.adminPort === undefined
      ? undefined
      : await listenAdmin(app, config.adminHost, config.adminPort, config);
  if (admin) app.log.info({ url: admin.url }, "admin listener (metrics, docs, console) listening");
  if (demo) print(demoBanner(demo, url));
  else if (makeDemo) {
    // A start-up read: retried through the request path's short timeouts like the others (deps.ts);
    // a store that still does not answer gets no hint rather than a wrong one.
    const demoExists = await duringStartup(() => deps.store.tenants.get(DEMO_TENANT)).then(
      (t) => t !== undefined,
      () => undefined,
    );
    if (demoExists !== undefined) print(demoHint(demoExists));
  }
  let closing: Promise<void> | undefined;
  return {
    app,
    url,
    adminUrl: admin?.url,
    close: () => {
      closing ??= (async () => {
        await housekeeping.stop();
        // In-flight requests may finish; past the grace period every connection still open is cut
        // (a client trickling a request must not hold the shutdown).
        const grace = setTimeout(() => {
          app.log.warn(
            { graceMs: config.shutdownGraceMs },
            "shutdown grace period over: closing connections",
          );
          app.server.closeAllConnections();
        }, config.shutdownGraceMs);
        await admin?.close();
        await app.close();
        clearTimeout(grace);
        // In-flight requests are done; degraded events still waiting get a last chance at the store.
        await deps.pendingEvents.drain(5000);
        await spoolWaitingEvents(app, deps);
        await closeDeps(deps);
      })();
      return closing;
    },
  };
}

/** Resolves once SIGTERM or SIGINT has stopped the server and it has drained. */
function untilStopped(server: RunningServer): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (why: string) => {
      if (stopping) return;
      stopping = true;
      const started = Date.now();
      server.app.log.info({ signal: why }, "shutting down: draining in-flight requests");
      server
        .close()
        .then(() =>
          server.app.log.info(
            { signal: why, ms: Date.now() - started },
            "stopped: requests finished, waiting events written or spooled, store closed",
          ),
        )
        .catch((err: unknown) => server.app.log.error({ err }, "error while shutting down"))
        .finally(resolve);
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
}

export interface ServeOptions extends Omit<StartOptions, "worker"> {
  /** Processes to serve with (overrides WARDEN_WORKERS); 1 serves in this process. */
  workers?: number;
}

/**
 * `warden serve`: runs until SIGTERM or SIGINT, then drains and exits 0. With more than one worker
 * this process is the primary of that many (cluster/primary.ts); a worker it forks lands here too
 * and serves without migrating, then leaves the cluster once drained. (A worker whose primary dies
 * exits at once: node:cluster ends a worker whose channel to the primary closes unexpectedly.)
 */
export async function serve(
  config: Config,
  print: (line: string) => void,
  options: ServeOptions = {},
): Promise<number> {
  const channel = workerChannel();
  if (channel) {
    const server = await startServer(config, print, { migrate: false, worker: channel });
    channel.ready(server.url, server.adminUrl);
    await untilStopped(server);
    if (cluster.worker?.isConnected()) cluster.worker.disconnect();
    return 0;
  }
  const workers = options.workers ?? config.workers;
  if (workers > 1) {
    return runPrimary(config, print, {
      workers,
      migrate: options.migrate !== false,
      demo: options.demo === true,
    });
  }
  await untilStopped(await startServer(config, print, options));
  return 0;
}
