import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emailHash } from "../operations/verify/signals/email.js";
import { type Store, StoreUnavailableError } from "../store/interfaces.js";
import { openSqliteStore } from "../store/sqlite/sqliteStore.js";
import { cliSandbox, runWarden, stdoutOf } from "../testing/cliSandbox.js";
import {
  bearer,
  CHROME_HEADERS,
  CHROME_UA,
  faultyStore,
  makeTestApp,
  type TestApp,
  testEvent,
} from "../testing/harness.js";

const { dir, env } = cliSandbox();
const file = path.join(dir, "cli.db");

async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openSqliteStore({ file, busyTimeoutMs: 5000 });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

const ADDRESS = "Jane.Doe@Example.com";
/** A value only the erased events carry, to look for in the database file afterwards. */
const MARKER = "session-of-jane-0f9a8b7c6d5e4f3a2b1c";

describe("warden erase", () => {
  beforeAll(async () => {
    expect((await runWarden(env, ["tenant", "create", "acme"])).code).toBe(0);
    expect((await runWarden(env, ["tenant", "create", "other"])).code).toBe(0);
    await withStore(async (store) => {
      const jane = { emailHash: emailHash(ADDRESS), session: MARKER };
      await store.events.record(testEvent("evt_jane_1", { tenantId: "acme", ...jane }), undefined);
      await store.events.record(testEvent("evt_jane_2", { tenantId: "acme", ...jane }), undefined);
      await store.events.record(testEvent("evt_jane_elsewhere", { tenantId: "other", ...jane }), undefined);
      await store.events.record(testEvent("evt_someone", { tenantId: "acme" }), undefined);
      const observed = await store.feedback.append(
        {
          feedbackId: "fb_jane",
          tenantId: "acme",
          eventId: "evt_jane_1",
          outcome: "chargeback",
          value: 30,
          unit: "usd",
          source: null,
          observedAt: 2000,
          receivedAt: 2000,
          identity: "identity-fb_jane",
        },
        [],
        undefined,
      );
      expect(observed.kind).toBe("appended");
    });
  });

  it("erases a person's events by email address (hashed as verify hashes it) with their feedback, in that tenant only, and prints what it deleted; again, nothing", async () => {
    const res = await runWarden(env, ["erase", "--tenant", "acme", "--email", "  jane.doe@example.COM "]);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(
      `erased from tenant acme, email sha256 ${emailHash(ADDRESS)}: 2 events, 0 challenges, 0 clears, 1 feedback observation, 0 resolutions, 0 stored idempotent answers\n`,
    );
    await withStore(async (store) => {
      expect(await store.events.get("acme", "evt_jane_1")).toBeUndefined();
      expect(await store.events.get("acme", "evt_jane_2")).toBeUndefined();
      expect(await store.feedback.get("acme", "fb_jane")).toBeUndefined();
      expect(await store.events.get("other", "evt_jane_elsewhere")).toBeDefined();
      expect(await store.events.get("acme", "evt_someone")).toBeDefined();
    });
    const again = await runWarden(env, [
      "erase",
      "--tenant",
      "acme",
      "--email-sha256",
      emailHash(ADDRESS),
      "--json",
    ]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      tenantId: "acme",
      subject: { emailHash: emailHash(ADDRESS) },
      removed: { events: 0, challenges: 0, clears: 0, observations: 0, resolutions: 0, idempotentAnswers: 0 },
    });
  });

  it("overwrites what it erased in the SQLite file: the erased values are not on disk", async () => {
    // The other tenant's copy is still there; erasing it leaves no trace of the marker.
    const res = await runWarden(env, ["erase", "--tenant", "other", "--session", MARKER, "--json"]);
    expect(JSON.parse(res.stdout).removed.events).toBe(1);
    // Closing the last connection checkpoints the write-ahead log into the file and removes it.
    await withStore(async () => undefined);
    const disk = ["cli.db", "cli.db-wal"]
      .map((f) => path.join(dir, f))
      .filter((f) => fs.existsSync(f))
      .map((f) => fs.readFileSync(f).toString("latin1"))
      .join("");
    expect(disk).not.toContain(MARKER);
    expect(disk).not.toContain(emailHash(ADDRESS));
  });

  it("erases by network: an address is truncated as verify truncates it, and the network is named", async () => {
    await withStore((store) =>
      store.events.record(testEvent("evt_net", { tenantId: "acme", network: "192.0.2.0/24" }), undefined),
    );
    const res = await runWarden(env, ["erase", "--tenant", "acme", "--ip", "192.0.2.77"]);
    expect(res.stdout).toMatch(/^erased from tenant acme, network 192\.0\.2\.0\/24: 1 event, /);
    expect(await withStore((store) => store.events.get("acme", "evt_net"))).toBeUndefined();
  });

  it.each([
    [
      ["erase", "--tenant", "acme"],
      /give exactly one of --email, --email-sha256, --ip, --session or --event/,
    ],
    [["erase", "--tenant", "acme", "--event", "evt_1", "--session", "s"], /give exactly one of/],
    [["erase", "--tenant", "acme", "--email", "not-an-address"], /--email must be an email address/],
    [["erase", "--tenant", "acme", "--email-sha256", "abc"], /--email-sha256 must be 64 hexadecimal digits/],
    [["erase", "--tenant", "acme", "--ip", "999.1.1.1"], /--ip must be an IPv4 or IPv6 address or network/],
    [
      ["erase", "--tenant", "acme", "--ip", "10.0.0.0/8"],
      /--ip must be an address or a network no wider than \/24/,
    ],
    [["erase", "--email", "a@b.example"], /--tenant <tenantId> is required/],
  ])("refuses %j with exit code 2", async (args, message) => {
    const res = await runWarden(env, args);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
  });

  it("refuses an unknown tenant with exit code 1", async () => {
    const res = await runWarden(env, ["erase", "--tenant", "ghost", "--event", "evt_1"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/unknown tenant "ghost"/);
  });
});

describe("warden erase against a running app's database: a person's degraded events go too", () => {
  const JANE = "jane.roe@example.org";
  const BOB = "bob@example.org";
  let t: TestApp;
  let apiKey: string;
  const failing = new Set<string>();

  beforeAll(async () => {
    t = await makeTestApp({
      wrapStore: (s) =>
        faultyStore(s, { failing, error: () => new StoreUnavailableError("injected outage") }),
    });
    await t.tenant("acme");
    apiKey = (await t.key("acme")).apiKey;
  });
  afterAll(() => t.close());

  const post = (url: string, payload: Record<string, unknown>, idempotencyKey?: string) =>
    t.app.inject({
      method: "POST",
      url,
      headers: { ...bearer(apiKey), ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}) },
      payload,
    });

  /**
   * A person's rows: a scored event with feedback, and a degraded one (answered while the counters
   * failed, recorded once the store took it) with its stored answer, a challenge and feedback, each
   * with an idempotency key. Resolves their ids.
   */
  async function person(address: string, tag: string) {
    const subject = { emailSha256: emailHash(address), userAgent: CHROME_UA, headers: CHROME_HEADERS };
    const scored = (await post("/v1/verify", { action: "signup", session: `${tag}-1`, subject })).json();
    expect(scored).toMatchObject({ degraded: false });
    failing.add("counters.hit");
    const degraded = (
      await post("/v1/verify", { action: "signup", session: `${tag}-2`, subject }, `${tag}-verify`)
    ).json();
    failing.clear();
    expect(degraded).toMatchObject({ decision: "challenge", degraded: true });
    await t.deps.pendingEvents.flush();
    const issued = await post("/v1/challenge", { eventId: degraded.eventId, session: `${tag}-2` });
    expect(issued.statusCode).toBe(200);
    for (const [eventId, key] of [
      [scored.eventId, `${tag}-fb-1`],
      [degraded.eventId, `${tag}-fb-2`],
    ] as const) {
      const fed = await post("/v1/feedback", { eventId, outcome: "chargeback", value: 20 }, key);
      expect(fed.statusCode).toBe(200);
    }
    return {
      events: [scored.eventId as string, degraded.eventId as string],
      challengeId: issued.json().challengeId as string,
      keys: [
        { tenantId: "acme", operation: "verify", key: `${tag}-verify` },
        { tenantId: "acme", operation: "feedback", key: `${tag}-fb-1` },
        { tenantId: "acme", operation: "feedback", key: `${tag}-fb-2` },
      ],
    };
  }

  /** What of `p` is still in the store, by kind. */
  async function left(p: Awaited<ReturnType<typeof person>>) {
    const events = [];
    const observations = [];
    for (const id of p.events) {
      if (await t.store.events.get("acme", id)) events.push(id);
      observations.push(...(await t.store.feedback.listForEvent("acme", id)));
    }
    const answers = [];
    for (const key of p.keys) if (await t.store.idempotency.find(key, 0)) answers.push(key.key);
    return {
      events: events.length,
      challenge: (await t.store.challenges.get("acme", p.challengeId)) !== undefined,
      observations: observations.length,
      answers: answers.length,
    };
  }

  it("erasure by --email removes the person's scored and degraded events, the challenge, the feedback and the stored answers; another person's stay", async () => {
    const jane = await person(JANE, "jane");
    const bob = await person(BOB, "bob");
    const whole = { events: 2, challenge: true, observations: 2, answers: 3 };
    expect(await left(jane)).toEqual(whole);
    const printed = stdoutOf(
      await runWarden({ WARDEN_DATABASE_URL: `sqlite:${t.dbFile}`, WARDEN_LOG_LEVEL: "silent" }, [
        "erase",
        "--tenant",
        "acme",
        "--email",
        JANE,
        "--json",
      ]),
    );
    expect(JSON.parse(printed).removed).toEqual({
      events: 2,
      challenges: 1,
      clears: 0,
      observations: 2,
      resolutions: 0,
      idempotentAnswers: 3,
    });
    expect(await left(jane)).toEqual({ events: 0, challenge: false, observations: 0, answers: 0 });
    expect(await left(bob)).toEqual(whole);
  });
});
