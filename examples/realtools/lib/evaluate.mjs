// Runs client classes against one Warden + example app, N signups each, every signup from its own
// residential /24, and tallies each signup's outcome as the app recorded it.
import fs from "node:fs";
import path from "node:path";
import { CLIENTS } from "../clients/index.mjs";
import { residentialAddresses } from "./addresses.mjs";
import { captureChromiumHeaders } from "./capture.mjs";
import { missingTools, startDisplay } from "./display.mjs";
import { identities } from "./identities.mjs";
import { loadPageModel } from "./pageEvidence.mjs";
import { newTempRoot, startStack, ticketEventId } from "./stack.mjs";
import { removeDir } from "./time.mjs";

/**
 * @typedef {{
 *   id: string, label: string, group: "bots" | "people", model: boolean,
 *   n: number, allowed: number, challenged: number, denied: number, other: number, created: number,
 *   everDenied: number, degraded: number, humanFirst: number, ms: number, errors: string[], restarts: string[],
 *   reasons: Map<string, number>,
 *   ja4: Set<string>, tlsJa4: Set<string>,
 *   skipped?: string,
 * }} Row
 *   ja4: the distinct JA4 values the doors passed to the app for this class's signups (computed from
 *   its ClientHellos; for a MODEL class, the one it declares for its browser, clients/modelJa4.mjs);
 *   tlsJa4: those computed from the ClientHellos the class really sent (the same, except for models).
 */

/** Does `id` match one of the --only selectors (exact id, or a prefix such as "playwright" or "person")? */
const selected = (id, only) => only.length === 0 || only.some((o) => id === o || id.startsWith(o));

/**
 * @param {{
 *   signups: number | ((client: import("../clients/types.mjs").ClientClass) => number),
 *   only?: string[], pageModel?: string, policy?: unknown, log?: (line: string) => void, reasons?: boolean,
 * }} opts signups: per client class, the same for all or chosen per class
 * @returns {Promise<{ rows: Row[], seconds: number }>}
 */
export async function evaluate({ signups, only = [], pageModel, policy, log = () => {}, reasons = true }) {
  const started = Date.now();
  const classes = CLIENTS.filter((c) => selected(c.id, only));
  if (classes.length === 0) throw new Error(`no client class matches ${only.join(", ")}`);
  const missing = missingTools();
  const tempRoot = newTempRoot();
  const model = await loadPageModel(pageModel);
  const needsDisplay = classes.some((c) => c.needs.includes("display"));
  /** @type {Awaited<ReturnType<typeof startStack>> | undefined} */
  let stack;
  /** @type {Awaited<ReturnType<typeof startDisplay>> | undefined} */
  let display;
  try {
    stack = await startStack({ tempRoot, policy, log });
    display = needsDisplay && !missing.includes("Xvfb") ? await startDisplay() : undefined;
  } catch (err) {
    await display?.close();
    await stack?.close();
    await removeDir(tempRoot);
    throw err;
  }
  let captured;
  // Browsers keep caches and certificate stores under HOME and the XDG directories (~/.pki,
  // ~/.cache/chromium…): theirs are in the run's temp dir, like everything else it writes.
  const home = path.join(tempRoot, "home");
  fs.mkdirSync(home);
  const browserEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_DATA_HOME: path.join(home, ".local/share"),
  };
  /** @type {import("../clients/types.mjs").RunContext} */
  const ctx = {
    tempRoot,
    appUrl: stack.appUrl,
    browserEnv,
    displayEnv: display ? { ...browserEnv, DISPLAY: display.display } : undefined,
    pageModel: model,
    chromiumHeaders: () => {
      captured ??= captureChromiumHeaders({
        env: /** @type {NodeJS.ProcessEnv} */ (ctx.displayEnv),
        tempRoot,
      });
      return captured;
    },
    answersFor: (address) => stack.answers.get(address) ?? [],
    log,
  };
  const addresses = residentialAddresses();
  const people = identities();
  /** @type {Row[]} */
  const rows = [];
  try {
    for (const client of classes) {
      /** @type {Row} */
      const row = {
        id: client.id,
        label: client.label,
        group: client.group,
        model: client.model === true,
        n: 0,
        allowed: 0,
        challenged: 0,
        denied: 0,
        other: 0,
        created: 0,
        everDenied: 0,
        degraded: 0,
        humanFirst: 0,
        ms: 0,
        errors: [],
        restarts: [],
        reasons: new Map(),
        ja4: new Set(),
        tlsJa4: new Set(),
      };
      rows.push(row);
      const lacking = client.needs
        .map((n) => ({ chromium: "Chromium", display: "Xvfb", xdotool: "xdotool" })[n])
        .filter((n) => missing.some((m) => m.startsWith(n)));
      if (lacking.length > 0) {
        row.skipped = `missing ${lacking.join(", ")}`;
        log(`${client.id}: SKIPPED (${row.skipped})`);
        continue;
      }
      const rowStarted = Date.now();
      let running;
      try {
        running = await client.start(ctx);
      } catch (err) {
        row.skipped = `did not start: ${String(err?.message ?? err).split("\n")[0]}`;
        log(`${client.id}: ${row.skipped}`);
        continue;
      }
      try {
        const count = typeof signups === "function" ? signups(client) : signups;
        let revivals = 0;
        for (let i = 0; i < count; i++) {
          const { address } = addresses.next();
          const identity = people.next();
          const since = new Date().toISOString();
          const door = await stack.door(address, { modelJa4: client.model === true });
          let said;
          try {
            said = await running.signup(door, identity);
          } catch (err) {
            said = `error: ${String(err?.message ?? err).split("\n")[0]}`;
          } finally {
            await door.close();
          }
          for (const j of door.ja4) row.ja4.add(j);
          for (const j of door.tlsJa4) row.tlsJa4.add(j);
          // Warden itself went away during this signup (killed from outside or crashed): the signup
          // measured nothing, so it is run again once Warden is back (at most 3 times a class).
          const revived = await stack.reviveWarden();
          if (revived) {
            log(`${client.id} #${i + 1}: ${revived}; Warden started again, the signup is repeated`);
            row.restarts.push(revived);
            if (++revivals > 3) throw new Error(`Warden kept stopping: ${revived}`);
            i -= 1;
            continue;
          }
          if (typeof said === "string" && said.startsWith("error: ")) row.errors.push(said);
          row.n += 1;
          const answers = (stack.answers.get(address) ?? []).filter((a) => a.path === "/signup");
          const first = answers[0];
          if (first?.status === 201) row.allowed += 1;
          else if (first?.status === 428 && first.code === "warden_challenge") row.challenged += 1;
          else if (first?.status === 403 && first.code === "warden_denied") row.denied += 1;
          else row.other += 1;
          if (first?.degraded) row.degraded += 1;
          if (answers.some((a) => a.status === 403)) row.everDenied += 1;
          const created = stack.accounts.has(identity.email);
          if (created) row.created += 1;
          const eventId = first?.eventId ?? (first?.ticket ? ticketEventId(first.ticket) : undefined);
          if (reasons && first) {
            const event = await (eventId ? stack.event(eventId) : stack.firstEventSince(since)).catch(
              () => undefined,
            );
            if (event?.actorType === "human") row.humanFirst += 1;
            for (const r of event?.reasons ?? []) {
              // Reasons without their per-request numbers, so equal ones add up.
              const key = String(r).replace(/\d+(\.\d+)?%?/g, "#");
              row.reasons.set(key, (row.reasons.get(key) ?? 0) + 1);
            }
          }
          log(
            `${client.id} #${i + 1} ${address} ${identity.email}: ${
              answers.map((a) => `${a.status}${a.code ? ` ${a.code}` : ""}`).join(" → ") || "no answer"
            }${created ? " (created)" : ""}${typeof said === "string" ? ` [${said}]` : ""}`,
          );
        }
      } finally {
        await running.close().catch((err) => row.errors.push(`close: ${err?.message ?? err}`));
      }
      row.ms = Date.now() - rowStarted;
    }
  } finally {
    await display?.close();
    await stack.close();
    await removeDir(tempRoot);
  }
  return { rows, seconds: Math.round((Date.now() - started) / 1000) };
}
