import type { Verdict } from "@warden/server/dist/operations/verify/schema.js";
import type { ProbeBox } from "@warden/server/dist/operations/verify/signals/layoutProbe.js";
import {
  environmentDigest,
  type PageEnvironment,
} from "@warden/server/dist/operations/verify/signals/pageEnvironment.js";
import { type Device, type DeviceClass, DevicePopulation } from "./devicePopulation.js";
import { startEvalServer } from "./evalServer.js";
import { layOut } from "./probeLayout.js";
import { type Draws, draws, FREE, type PageVisit, personVisit, prng } from "./trafficGenerator.js";

/**
 * A day of one tenant's signups, for the campaign rule (signals/campaign.ts): people on the devices of
 * devicePopulation.ts arriving as a consumer site's do over a day, and, in the run with campaigns,
 * CAMPAIGNS beside them. Every signup runs the form's page: its token is asked for with the layout
 * probe (as watchPage does), the page lays the probe out (probeLayout.ts) and reports its environment
 * and the person's counts (trafficGenerator.ts personVisit). The tenant's edge forwards every
 * connection's JA4 (as docs/integration.md recommends). The server runs on the eval's clock through
 * the day (from midnight of a fixed date, so that the counters' buckets fall alike in every run), so
 * the campaign counters see the day's baseline build up as the tenant's would, from its first signup.
 *
 * People and campaigns draw from streams of their own: the runs with and without campaigns replay the
 * same people, and only the campaigns differ.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The day's midnight: UTC, London's time in November. */
export const DAY_START = Date.UTC(2026, 10, 2);
/** The campaign rule's short window (signals/campaign.ts SHORT_WINDOW_MS), for the eval's own counts. */
export const WINDOW_MS = 10 * MINUTE;

/**
 * Signups by time of day, as a share of the busiest hour's: a consumer site's, lowest at 04:00 (a
 * tenth of the peak) and highest at 16:00. An assumption of the model.
 */
function diurnal(hour: number): number {
  return 0.55 - 0.45 * Math.cos((2 * Math.PI * (hour - 4)) / 24);
}

/** Two setups that send signups from many networks, each with one page environment. */
export interface CampaignSpec {
  id: string;
  /** What it is, for the report. */
  what: string;
  /** The device class its page environment and user agent claim. */
  cls: DeviceClass;
}

export const CAMPAIGNS: readonly CampaignSpec[] = [
  {
    id: "one_machine",
    what: "one Windows machine's real Chrome (an anti-detect wrapper), 30 signups 20–40 s apart from 14:00",
    cls: "Windows Chrome",
  },
  {
    id: "replayed_iphone",
    what: "the most common iPhone's report replayed by a TLS-impersonating client, 30 signups at random over 19:00–20:00",
    cls: "iPhone Safari",
  },
];
const CAMPAIGN_SIZE = 30;

export interface DayAttempt {
  /** "person", or the campaign's id. */
  who: string;
  cls: DeviceClass;
  /** The verify's time, in milliseconds from the day's midnight. */
  at: number;
  page: PageVisit;
  environment: PageEnvironment;
  ja4: string;
  email: string;
  ip: string;
  session: string;
  userAgent: string;
  headers: Record<string, string>;
}

export interface DayTraffic {
  people: DayAttempt[];
  /** Each campaign's signups, in CAMPAIGNS' order. */
  campaigns: DayAttempt[][];
}

/** A signup from `device` at `at`, on a network and with an address of its own, its page's counts a person's. */
function signup(d: Draws, who: string, device: Device, at: number): DayAttempt {
  const ip = d.residential();
  const email = `${d.name()}${d.int(10_000)}@${d.pick(FREE)}`;
  const page = personVisit(d, ip, device.profile.ua, device.touch, {
    email,
    others: [10 + d.int(7)],
    medianSeconds: 12,
  });
  return {
    who,
    cls: device.cls,
    at,
    page,
    environment: device.environment,
    ja4: device.ja4,
    email,
    ip,
    session: d.session(),
    userAgent: device.profile.ua,
    headers: device.profile.headers,
  };
}

/**
 * The day's signups: `people` people on the population's devices at the diurnal curve's times, and the
 * campaigns: `one_machine`, one device of the population's Windows Chrome machines in a loop; and
 * `replayed_iphone`, the environment of the day's most common iPhone Safari device (by digest: one
 * phone model, market and browser build) captured once and replayed with that phone's user agent,
 * headers and handshake, the probe computed as a browser lays it out (examples/realtools shows such a
 * port of the arithmetic). Both send person-like page counts, each signup from its own residential
 * network with a fresh free-mail address.
 */
export function generateDay(o: { seed: number; people: number }, population: DevicePopulation): DayTraffic {
  const pp = draws(prng(o.seed ^ 0x1f83d9ab));
  const people: DayAttempt[] = [];
  for (let i = 0; i < o.people; i++) {
    let at = pp.rnd() * DAY;
    while (pp.rnd() >= diurnal(at / HOUR)) at = pp.rnd() * DAY;
    people.push(signup(pp, "person", population.draw(pp), Math.round(at)));
  }
  people.sort((a, b) => a.at - b.at);

  const cp = draws(prng(o.seed ^ 0x5be0cd19));
  const machine = population.draw(cp, "Windows Chrome");
  let at = 14 * HOUR;
  const oneMachine: DayAttempt[] = [];
  for (let i = 0; i < CAMPAIGN_SIZE; i++) {
    oneMachine.push(signup(cp, "one_machine", machine, at));
    at += Math.round(cp.between(20_000, 40_000));
  }

  const iphone = mostCommon(people.filter((p) => p.cls === "iPhone Safari"));
  const replayed: Device = {
    cls: "iPhone Safari",
    profile: { ua: iphone.userAgent, headers: iphone.headers },
    ja4: iphone.ja4,
    touch: true,
    environment: iphone.environment,
  };
  const times = Array.from({ length: CAMPAIGN_SIZE }, () => Math.round(19 * HOUR + cp.rnd() * HOUR));
  const replays = times.sort((a, b) => a - b).map((t) => signup(cp, "replayed_iphone", replayed, t));
  return { people, campaigns: [oneMachine, replays] };
}

/** The attempt whose environment digest the most of `attempts` share (the first of them). */
function mostCommon(attempts: readonly DayAttempt[]): DayAttempt {
  const counts = new Map<string, { n: number; first: DayAttempt }>();
  for (const a of attempts) {
    const key = environmentDigest(a.environment) ?? "";
    const c = counts.get(key);
    if (c) c.n++;
    else counts.set(key, { n: 1, first: a });
  }
  const best = [...counts.values()].sort((a, b) => b.n - a.n)[0];
  if (!best) throw new Error("the day has no iPhone Safari people to copy a report from");
  return best.first;
}

export interface DayRow {
  /** "person", or the campaign's id. */
  who: string;
  cls: DeviceClass;
  /** The verify's time, in milliseconds from the day's midnight. */
  at: number;
  decision: Verdict["decision"];
  actorType: Verdict["actorType"];
  degraded: boolean;
  findings: string[];
  /** The environment digest verify counts the attempt under (pageEnvironment.ts environmentDigest). */
  digest: string;
}

/**
 * Replays the day's attempts through the HTTP API in time order (page loads interleaved at their
 * times), on a fresh server whose clock moves to each request's time. Each page asks for its token
 * with a probe and answers it by laying it out.
 */
export async function runDay(
  attempts: readonly DayAttempt[],
  o: { verifyDeadlineMs?: number } = {},
): Promise<DayRow[]> {
  const sorted = [...attempts].sort((a, b) => a.at - b.at);
  const loads = sorted
    .map((a, i) => ({ i, at: DAY_START + a.at - a.page.fillMs }))
    .sort((a, b) => a.at - b.at || a.i - b.i);
  const first = loads[0]?.at ?? DAY_START;
  const server = await startEvalServer({
    startMs: Math.min(first, DAY_START) - MINUTE,
    transport: "inject",
    ...(o.verifyDeadlineMs === undefined ? {} : { verifyDeadlineMs: o.verifyDeadlineMs }),
  });
  const { clock, post } = server;
  try {
    const pages = new Map<number, { token: string; probe: number[] }>();
    let next = 0;
    const rows: DayRow[] = [];
    for (const [i, a] of sorted.entries()) {
      const verifyAt = DAY_START + a.at;
      for (; next < loads.length && (loads[next]?.at ?? 0) <= verifyAt; next++) {
        const load = loads[next] as { i: number; at: number };
        const visit = (sorted[load.i] as DayAttempt).page;
        clock.now = Math.max(clock.now, load.at);
        const issued = (await post("/v1/page-tokens", { subject: visit.subject, probe: true })) as {
          pageToken: string;
          probe?: { boxes: ProbeBox[] };
        };
        pages.set(load.i, { token: issued.pageToken, probe: layOut(issued.probe?.boxes ?? []) });
      }
      clock.now = Math.max(clock.now, verifyAt);
      const page = pages.get(i);
      pages.delete(i);
      if (!page) throw new Error("a day's signup verified before its page loaded");
      const v = (await post("/v1/verify", {
        action: "signup",
        session: a.session,
        subject: {
          email: a.email,
          ip: a.ip,
          userAgent: a.userAgent,
          headers: a.headers,
          tls: { ja4: a.ja4 },
          page: {
            token: page.token,
            behaviour: a.page.behaviour,
            environment: { ...a.environment, probe: page.probe },
          },
        },
      })) as Verdict;
      rows.push({
        who: a.who,
        cls: a.cls,
        at: a.at,
        decision: v.decision,
        actorType: v.actorType,
        degraded: v.degraded,
        findings: await server.findings(v.eventId),
        digest: environmentDigest(a.environment) ?? "",
      });
    }
    return rows;
  } finally {
    await server.close();
  }
}

export interface DayResult {
  /** The people's signups alone. */
  quiet: DayRow[];
  /** The same people with the campaigns beside them. */
  campaigns: DayRow[];
  /** Wall-clock seconds: drawing the devices, and the two runs. */
  seconds: { devices: number; runs: number };
}

/**
 * Verify's deadline in the day's runs: what the day measures is decisions, and a stall of a shared
 * machine past production's 45 ms would turn a person's verdict into the degraded challenge (a
 * verdict of the machine's load, not of the rule). verifyBench measures verify against its deadline.
 */
export const DAY_VERIFY_DEADLINE_MS = 5_000;

/** The day twice, without and with the campaigns, on one population of devices. */
export async function evaluateDay(o: {
  seed: number;
  people: number;
  verifyDeadlineMs?: number;
}): Promise<DayResult> {
  const started = performance.now();
  const traffic = generateDay(o, new DevicePopulation());
  const drawn = performance.now();
  const run = { verifyDeadlineMs: o.verifyDeadlineMs ?? DAY_VERIFY_DEADLINE_MS };
  const quiet = await runDay(traffic.people, run);
  const campaigns = await runDay([...traffic.people, ...traffic.campaigns.flat()], run);
  return {
    quiet,
    campaigns,
    seconds: { devices: (drawn - started) / 1000, runs: (performance.now() - drawn) / 1000 },
  };
}
