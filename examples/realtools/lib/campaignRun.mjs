// Campaign mode, the run: for each campaign (one tool), people before, the tool's signups paced over
// a few minutes, each from its own residential /24 with a fresh address, people after; against one
// Warden and app for all campaigns, as a site meets one campaign after another. With `reportAfter`,
// once that many of a campaign's signups have created accounts, the app's abuse desk reports those
// accounts' verify events (feedback `abuse_confirmed`) and the operator takes one action on the
// console's Campaigns page (lib/stack.mjs, denySharedMark); the campaign's signups after it are
// counted apart.
import { CLIENTS } from "../clients/index.mjs";
import { campaignPlan, count, noCounts } from "./campaign.mjs";
import { lacking, openRun, outcomeLine, signupOnce } from "./run.mjs";
import { sleep } from "./time.mjs";

/** The people who take turns around every campaign: the real person first, then the others. */
export const DEFAULT_PEOPLE = [
  "person-chromium-xdotool",
  "person-model-safari-ios",
  "person-model-firefox",
  "person-model-chrome-android",
  "person-chromium-ua-switcher",
  "person-model-android-webview",
];

/**
 * The campaign classes named by ids or id prefixes, in the order given (a prefix names each class it
 * matches: `impit` is three campaigns).
 * @param {string[]} ids
 */
export function campaignClasses(ids) {
  const out = [];
  for (const id of ids) {
    const matched = CLIENTS.filter((c) => c.group === "bots" && (c.id === id || c.id.startsWith(id)));
    if (matched.length === 0) throw new Error(`no bot class matches ${id} (npm run eval:real -- --list)`);
    for (const c of matched) if (!out.includes(c)) out.push(c);
  }
  return out;
}

/**
 * @param {{
 *   ids: string[], size?: number, people?: number, peopleClasses?: string[], spreadMs?: number,
 *   ja4?: boolean, reportAfter?: number,
 *   onReport?: (report: { campaign: string, eventIds: string[], statuses: number[] }) => Promise<void> | void,
 *   pageModel?: string, policy?: unknown, log?: (line: string) => void, reasons?: boolean,
 * }} opts
 *   size: signups per campaign (30); people: people's signups before each campaign and as many after
 *   (10); spreadMs: the campaign's signups start this far apart in all (180 s), or back to back when a
 *   signup takes longer than its share; ja4: false, the doors are plain reverse proxies that pass no
 *   JA4; reportAfter: report abuse on a campaign's first N accounts once it has N
 * @returns {Promise<{ results: import("./campaign.mjs").CampaignResult[], seconds: number }>}
 */
export async function runCampaigns({
  ids,
  size = 30,
  people = 10,
  peopleClasses = DEFAULT_PEOPLE,
  spreadMs = 180_000,
  ja4 = true,
  reportAfter,
  onReport = () => {},
  pageModel,
  policy,
  log = () => {},
  reasons = true,
}) {
  const started = Date.now();
  const campaigns = campaignClasses(ids);
  const peopleList = peopleClasses.map((id) => {
    const c = CLIENTS.find((k) => k.id === id && k.group === "people");
    if (!c) throw new Error(`${id} is not a people class`);
    return c;
  });
  const run = await openRun({
    pageModel,
    policy,
    log,
    display: [...campaigns, ...peopleList].some((c) => c.needs.includes("display")),
  });
  // People whose tools are missing here leave the rotation, and say so; the real person's absence is
  // in the table's header line (lib/campaign.mjs reads `peopleMissing`).
  const present = peopleList.filter((c) => {
    const lack = lacking(c, run.missing);
    if (lack.length > 0) log(`${c.id}: SKIPPED (missing ${lack.join(", ")})`);
    return lack.length === 0;
  });
  /** @type {Map<string, import("../clients/types.mjs").RunningClient>} */
  const runningPeople = new Map();
  const person = async (id) => {
    let r = runningPeople.get(id);
    if (!r) {
      const c = /** @type {import("../clients/types.mjs").ClientClass} */ (present.find((k) => k.id === id));
      r = await c.start(run.ctx);
      runningPeople.set(id, r);
    }
    return r;
  };
  /** @type {import("./campaign.mjs").CampaignResult[]} */
  const results = [];
  try {
    for (const client of campaigns) {
      /** @type {import("./campaign.mjs").CampaignResult} */
      const result = {
        id: client.id,
        label: client.label,
        ja4,
        campaign: noCounts(),
        before: noCounts(),
        after: noCounts(),
        ms: 0,
        seconds: 0,
        errors: [],
        ja4Seen: new Set(),
        reasons: new Map(),
      };
      results.push(result);
      const lack = lacking(client, run.missing);
      if (lack.length > 0) {
        result.skipped = `missing ${lack.join(", ")}`;
        log(`${client.id}: SKIPPED (${result.skipped})`);
        continue;
      }
      const campaignStarted = Date.now();
      const plan = campaignPlan({
        campaign: client.id,
        size,
        people,
        peopleClasses: present.map((c) => c.id),
        spreadMs,
      });
      let running;
      /** @type {string[]} */
      const accounts = [];
      let firstAt = 0;
      try {
        for (const [i, step] of plan.entries()) {
          if (step.phase === "campaign") {
            if (!running) {
              running = await client.start(run.ctx);
              firstAt = Date.now();
            }
            const wait = firstAt + (step.at ?? 0) - Date.now();
            if (wait > 0) await sleep(wait);
            const o = await signupOnce(run, client, running, { ja4, reasons });
            count(result.campaign, o);
            if (o.error) result.errors.push(o.error);
            for (const j of o.tlsJa4) result.ja4Seen.add(j);
            for (const r of o.reasons) {
              const key = r.replace(/\d+(\.\d+)?%?/g, "#");
              result.reasons.set(key, (result.reasons.get(key) ?? 0) + 1);
            }
            if (o.created && o.accountEventId) accounts.push(o.accountEventId);
            log(outcomeLine(client.id, `campaign #${result.campaign.n}`, o));
            if (reportAfter && !result.reported && accounts.length >= reportAfter) {
              const eventIds = accounts.slice(0, reportAfter);
              const statuses = [];
              for (const id of eventIds) statuses.push(await run.stack.feedback(id, "abuse_confirmed"));
              result.reported = { after: result.campaign.n, eventIds, statuses };
              log(
                `${client.id}: ${eventIds.length} accounts reported abuse_confirmed (${statuses.join(" ")})`,
              );
              await onReport({ campaign: client.id, eventIds, statuses });
              result.action = await run.stack.denySharedMark({
                since: new Date(campaignStarted - 60_000).toISOString(),
                reported: eventIds.length,
              });
              result.afterAction = noCounts();
              log(`${client.id}: operator: ${JSON.stringify(result.action)}`);
            } else if (result.afterAction) count(result.afterAction, o);
            if (plan[i + 1]?.phase !== "campaign") {
              result.ms = Date.now() - firstAt;
              await running.close().catch((err) => result.errors.push(`close: ${err?.message ?? err}`));
              running = undefined;
            }
            continue;
          }
          const c = /** @type {import("../clients/types.mjs").ClientClass} */ (
            present.find((k) => k.id === step.client)
          );
          const o = await signupOnce(run, c, await person(step.client), { ja4, reasons });
          count(result[step.phase], o);
          log(outcomeLine(c.id, `${step.phase} ${client.id}`, o));
        }
      } catch (err) {
        result.errors.push(String(err?.message ?? err).split("\n")[0]);
        log(`${client.id}: campaign stopped: ${err?.message ?? err}`);
      } finally {
        await running?.close().catch(() => {});
      }
      result.seconds = Math.round((Date.now() - campaignStarted) / 1000);
    }
  } finally {
    for (const r of runningPeople.values()) await r.close().catch(() => {});
    await run.close();
  }
  return {
    results,
    seconds: Math.round((Date.now() - started) / 1000),
    peopleRun: present.map((c) => c.id),
    peopleMissing: peopleList.filter((c) => !present.includes(c)).map((c) => c.id),
  };
}
