// One measuring run: Warden and the recorded app (lib/stack.mjs), this run's display when a class
// needs one, the context every client class starts with, and one signup through its own door, read on
// the app's side. lib/evaluate.mjs (N signups per class) and lib/campaign.mjs (campaigns with people
// before and after) are both made of these.
import fs from "node:fs";
import path from "node:path";
import { residentialAddresses } from "./addresses.mjs";
import { captureChromiumHeaders } from "./capture.mjs";
import { missingTools, PERSON_SCREEN, startDisplay } from "./display.mjs";
import { identities } from "./identities.mjs";
import { loadPageModel } from "./pageEvidence.mjs";
import { newTempRoot, startStack, ticketEventId } from "./stack.mjs";
import { removeDir } from "./time.mjs";

/**
 * @typedef {{
 *   address: string, email: string,
 *   first: "allowed" | "challenged" | "denied" | "other",
 *   created: boolean, everDenied: boolean, degraded: boolean,
 *   eventId?: string, accountEventId?: string, humanFirst: boolean, reasons: string[],
 *   answers: string, said: unknown, error?: string,
 *   ja4: Set<string>, tlsJa4: Set<string>, restarts: string[], ms: number,
 * }} SignupOutcome
 *   first: the app's first /signup answer (201, 428 warden_challenge, 403 warden_denied, anything else);
 *   created: the app's accounts map has the signup's email; accountEventId: the verify that allowed it.
 */

/** What a class needs that this machine lacks (names), or an empty list. */
export function lacking(client, missing = missingTools()) {
  return client.needs
    .map((n) => ({ chromium: "Chromium", display: "Xvfb", xdotool: "xdotool" })[n])
    .filter((n) => missing.some((m) => m.startsWith(n)));
}

/**
 * Starts Warden, the app and (when `display`) Xvfb in a fresh temp dir.
 * @param {{ pageModel?: string, policy?: unknown, log?: (line: string) => void, display?: boolean }} opts
 */
export async function openRun({ pageModel, policy, log = () => {}, display: wantDisplay = false }) {
  const missing = missingTools();
  const tempRoot = newTempRoot();
  const model = await loadPageModel(pageModel);
  /** @type {Awaited<ReturnType<typeof startStack>> | undefined} */
  let stack;
  /** @type {Awaited<ReturnType<typeof startDisplay>> | undefined} */
  let display;
  /** @type {Awaited<ReturnType<typeof startDisplay>> | undefined} */
  let personDisplay;
  try {
    stack = await startStack({ tempRoot, policy, log });
    if (wantDisplay && !missing.includes("Xvfb")) {
      display = await startDisplay();
      personDisplay = await startDisplay(PERSON_SCREEN);
    }
  } catch (err) {
    await personDisplay?.close();
    await display?.close();
    await stack?.close();
    await removeDir(tempRoot);
    throw err;
  }
  const started = stack;
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
  /** The page counts a person's real browser sent in this run (its first /signup), newest last. */
  const personBehaviours = [];
  /** @type {import("../clients/types.mjs").RunContext} */
  const ctx = {
    tempRoot,
    appUrl: started.appUrl,
    browserEnv,
    displayEnv: display ? { ...browserEnv, DISPLAY: display.display } : undefined,
    personDisplayEnv: personDisplay ? { ...browserEnv, DISPLAY: personDisplay.display } : undefined,
    pageModel: model,
    chromiumHeaders: () => {
      captured ??= captureChromiumHeaders({
        env: /** @type {NodeJS.ProcessEnv} */ (ctx.displayEnv),
        tempRoot,
      });
      return captured;
    },
    answersFor: (address) => started.answers.get(address) ?? [],
    personBehaviours,
    log,
  };
  return {
    ctx,
    stack: started,
    missing,
    addresses: residentialAddresses(),
    people: identities(),
    async close() {
      await personDisplay?.close();
      await display?.close();
      await started.close();
      await removeDir(tempRoot);
    },
  };
}

/**
 * One signup of a started class through a door of its own (a fresh residential /24 and identity).
 * When Warden itself went away during it (killed from outside, or a crash), it is started again and
 * the signup repeated, at most 3 times.
 * @param {Awaited<ReturnType<typeof openRun>>} run
 * @param {import("../clients/types.mjs").ClientClass} client
 * @param {import("../clients/types.mjs").RunningClient} running
 * @param {{ ja4?: boolean, reasons?: boolean }} [opts] ja4: false, the door passes no JA4 to the app
 * @returns {Promise<SignupOutcome>}
 */
export async function signupOnce(run, client, running, { ja4 = true, reasons = true } = {}) {
  const { stack } = run;
  const restarts = [];
  for (;;) {
    const started = Date.now();
    const { address } = run.addresses.next();
    const identity = run.people.next();
    const since = new Date().toISOString();
    const door = await stack.door(address, { modelJa4: client.model === true, ja4 });
    let said;
    try {
      said = await running.signup(door, identity);
    } catch (err) {
      said = `error: ${String(err?.message ?? err).split("\n")[0]}`;
    } finally {
      await door.close();
    }
    const revived = await stack.reviveWarden();
    if (revived) {
      run.ctx.log(`${client.id}: ${revived}; Warden started again, the signup is repeated`);
      restarts.push(revived);
      if (restarts.length > 3) throw new Error(`Warden kept stopping: ${revived}`);
      continue;
    }
    const answers = (stack.answers.get(address) ?? []).filter((a) => a.path === "/signup");
    const first = answers[0];
    const account = stack.accounts.get(identity.email);
    const eventId = first?.eventId ?? (first?.ticket ? ticketEventId(first.ticket) : undefined);
    /** @type {SignupOutcome} */
    const outcome = {
      address,
      email: identity.email,
      first:
        first?.status === 201
          ? "allowed"
          : first?.status === 428 && first.code === "warden_challenge"
            ? "challenged"
            : first?.status === 403 && first.code === "warden_denied"
              ? "denied"
              : "other",
      created: account !== undefined,
      everDenied: answers.some((a) => a.status === 403),
      degraded: first?.degraded === true,
      eventId,
      accountEventId: account?.eventId,
      humanFirst: false,
      reasons: [],
      answers: answers.map((a) => `${a.status}${a.code ? ` ${a.code}` : ""}`).join(" → ") || "no answer",
      said,
      ja4: door.ja4,
      tlsJa4: door.tlsJa4,
      restarts,
      ms: Date.now() - started,
    };
    if (typeof said === "string" && said.startsWith("error: ")) outcome.error = said;
    if (client.group === "people" && !client.model && first?.behaviour) {
      run.ctx.personBehaviours.push(first.behaviour);
    }
    if (reasons && first) {
      const event = await (eventId ? stack.event(eventId) : stack.firstEventSince(since)).catch(
        () => undefined,
      );
      outcome.humanFirst = event?.actorType === "human";
      outcome.reasons = (event?.reasons ?? []).map(String);
    }
    return outcome;
  }
}

/**
 * One line for the log: the class, the signup's network and email, the app's answers; a first verdict
 * that was not an allow says whether it was degraded and, with `--reasons`, its first reason.
 */
export const outcomeLine = (id, label, o) =>
  `${id} ${label} ${o.address} ${o.email}: ${o.answers}${o.created ? " (created)" : ""}${
    typeof o.said === "string" ? ` [${o.said}]` : ""
  }${o.first !== "allowed" && o.degraded ? " {degraded}" : ""}${
    o.first !== "allowed" && !o.degraded && o.reasons[0] ? ` {${o.reasons[0]}}` : ""
  }`;
