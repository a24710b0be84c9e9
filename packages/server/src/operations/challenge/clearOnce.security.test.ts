import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";
import { postgresSchemaOrSkip, sqliteAndPostgres, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import { emailHash } from "../verify/signals/email.js";
import { solvePow } from "./methods/proofOfWork/proofOfWork.js";

const pgSchema = await postgresSchemaOrSkip(
  "one clear per challenged attempt on PostgreSQL",
  "the PostgreSQL half of the once-only clearing test",
);

const stores = sqliteAndPostgres(pgSchema);

describe.each(stores)("clears on %s", (_name, open) => {
  let t: TestApp;
  /** The challenges that re-verifies asked the store to redeem. */
  const redemptions: string[] = [];
  let key: string;
  beforeAll(async () => {
    const store = open ? await open() : undefined;
    t = await makeTestApp({
      env: { WARDEN_RATE_LIMIT_MAX: "1000000" },
      wrapStore: (s) => ({
        ...s,
        events: {
          ...s.events,
          record: (event, idem, signal, options) => {
            if (options?.redeem) redemptions.push(options.redeem.challengeId);
            return s.events.record(event, idem, signal, options);
          },
        },
      }),
      ...(store ? { store } : {}),
    });
    await t.tenant("acme");
    key = (await t.key("acme")).apiKey;
  });
  afterAll(() => t.close());

  const post = async (url: string, payload: unknown) => {
    const res = await t.app.inject({ method: "POST", url, headers: bearer(key), payload: payload as object });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };
  /** Each session its own network, so that no test's attempts add up to a velocity finding. */
  const networks = new Map<string, string>();
  const network = (session: string) => {
    if (!networks.has(session)) networks.set(session, `198.18.${networks.size}.0/24`);
    return networks.get(session) as string;
  };
  /** No user agent: challenged without automation evidence, so at the default tier's difficulty. */
  const attempt = (session: string) => ({
    action: "signup",
    session,
    subject: { ipTrunc: network(session) },
  });
  async function solvedOn(eventId: string, session: string): Promise<string> {
    const issued = await post("/v1/challenge", { eventId, session });
    expect(issued.status).toBe(200);
    const c = issued.body as { challengeId: string; instructions: { seed: string; difficulty: number } };
    const done = await post("/v1/challenge", {
      eventId,
      session,
      challengeId: c.challengeId,
      proof: { nonce: solvePow(c.instructions.seed, c.instructions.difficulty).nonce },
    });
    expect(done.status).toBe(200);
    return c.challengeId;
  }
  const reverify = (session: string, challengeId: string, subject?: Record<string, unknown>) =>
    post("/v1/verify", { ...attempt(session), ...(subject ? { subject } : {}), context: { challengeId } });
  const fresh = () => `s-${Math.random().toString(36).slice(2)}`;
  async function challenged(session: string): Promise<string> {
    const v = await post("/v1/verify", attempt(session));
    expect(v.body).toMatchObject({ decision: "challenge", degraded: false });
    return v.body.eventId as string;
  }

  it("of 20 concurrent re-verifies of one clear exactly one is honoured, and one asks the store", async () => {
    const session = fresh();
    const id = await solvedOn(await challenged(session), session);
    redemptions.length = 0;
    const answers = (await Promise.all(Array.from({ length: 20 }, () => reverify(session, id)))).map(
      (a) => a.body,
    );
    expect(answers.filter((b) => b.degraded)).toHaveLength(0);
    expect(answers.filter((b) => b.challengeCleared === true)).toHaveLength(1);
    for (const b of answers) if (b.challengeCleared !== true) expect(b.decision).not.toBe("allow");
    // The others waited for the first redemption's outcome instead of queueing transactions of their
    // own on the clear's row (clearsInFlight.ts).
    expect(redemptions).toEqual([id]);
  });

  it("of 20 concurrent re-verifies spread over four challenges of one event, one is honoured and one asks the store", async () => {
    const session = fresh();
    const eventId = await challenged(session);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await solvedOn(eventId, session));
    redemptions.length = 0;
    const answers = (
      await Promise.all(Array.from({ length: 20 }, (_, i) => reverify(session, ids[i % 4] as string)))
    ).map((a) => a.body);
    expect(answers.filter((b) => b.degraded)).toHaveLength(0);
    expect(answers.filter((b) => b.challengeCleared === true)).toHaveLength(1);
    expect(redemptions).toHaveLength(1);
  });

  // PostgreSQL only: SQLite's writers never hold a row for another to pass over (BEGIN IMMEDIATE).
  if (open !== undefined)
    it("a redemption passes over an event another transaction holds (another process redeeming a clear of it)", async () => {
      const session = fresh();
      const eventId = await challenged(session);
      const id = await solvedOn(eventId, session);
      const holder = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await holder.connect();
      try {
        await holder.query("begin");
        // What another process's redemption of the event holds (SqlRuntime.tryExclusive).
        await holder.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [
          `event-clear\nacme\n${eventId}`,
        ]);
        const passed = (await reverify(session, id)).body;
        expect(passed).toMatchObject({ decision: "challenge", degraded: false });
        expect((passed.reasons as string[])[0]).toMatch(
          /another verify used or is using a clear of this attempt/,
        );
        await holder.query("rollback");
        // The holder rolled back: the clear is still there for the next re-verify.
        expect((await reverify(session, id)).body).toMatchObject({
          decision: "allow",
          challengeCleared: true,
        });
      } finally {
        await holder.end();
      }
    });

  it("one clear per challenged attempt: a second challenge on the event is not honoured, a third not issued", async () => {
    const session = fresh();
    const eventId = await challenged(session);
    const first = await solvedOn(eventId, session);
    const second = await solvedOn(eventId, session);
    expect((await reverify(session, first)).body).toMatchObject({
      decision: "allow",
      challengeCleared: true,
    });
    const again = (await reverify(session, second)).body;
    expect(again.decision).not.toBe("allow");
    expect(again).not.toHaveProperty("challengeCleared");
    expect((again.reasons as string[])[0]).toMatch(/another verify used or is using a clear of this attempt/);
    const third = await post("/v1/challenge", { eventId, session });
    expect(third).toMatchObject({ status: 409, body: { error: "conflict", code: "event_already_cleared" } });
  });

  it("a re-verify carrying what scores deny on its own is not cleared, and the clear stays unspent", async () => {
    const session = fresh();
    const id = await solvedOn(await challenged(session), session);
    const forged = {
      ...attempt(session).subject,
      headers: { signature: "x", "signature-input": "y" },
    };
    const alone = (
      await post("/v1/verify", { action: "signup", session: `${session}-alone`, subject: forged })
    ).body;
    expect(alone.decision).toBe("deny");
    const refused = (await reverify(session, id, forged)).body;
    expect(refused.decision).toBe("deny");
    expect(refused).not.toHaveProperty("challengeCleared");
    expect((refused.reasons as string[])[0]).toMatch(
      /scores deny, and a clear never turns a deny into allow/,
    );
    expect((await reverify(session, id)).body).toMatchObject({ decision: "allow", challengeCleared: true });
  });

  it("the honoured clear's allow records the attempt's email hash and network: a search by either finds both events", async () => {
    const session = fresh();
    const subject = { ipTrunc: network(session), emailSha256: emailHash(`${session}@example.org`) };
    const first = (await post("/v1/verify", { action: "signup", session, subject })).body;
    expect(first).toMatchObject({ decision: "challenge", degraded: false });
    const id = await solvedOn(first.eventId as string, session);
    const again = (await reverify(session, id, subject)).body;
    expect(again).toMatchObject({ decision: "allow", challengeCleared: true });
    const found = async (query: string) => {
      const res = await t.app.inject({ method: "GET", url: `/v1/events?${query}`, headers: bearer(key) });
      expect(res.statusCode).toBe(200);
      return (res.json().items as { eventId: string }[]).map((e) => e.eventId).sort();
    };
    const both = [first.eventId as string, again.eventId as string].sort();
    expect(await found(`emailHash=${subject.emailSha256}`)).toEqual(both);
    expect(await found(`network=${encodeURIComponent(subject.ipTrunc)}`)).toEqual(both);
  });

  it("the user agent a re-verify forwards as a header is the attempt's user agent", async () => {
    const session = fresh();
    const v = await post("/v1/verify", { action: "signup", session, subject: { ipTrunc: network(session) } });
    expect(v.body.decision).toBe("challenge");
    const id = await solvedOn(v.body.eventId as string, session);
    const moved = { ipTrunc: network(session), headers: { "User-Agent": "python-requests/2.31" } };
    const refused = (await reverify(session, id, moved)).body;
    expect(refused).not.toHaveProperty("challengeCleared");
    expect((refused.reasons as string[])[0]).toMatch(/earned on another attempt/);
    const same = (await reverify(session, id, { ipTrunc: network(session) })).body;
    expect(same).toMatchObject({ decision: "allow", challengeCleared: true });
  });
});

describe("an idempotency key across enforcement modes", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
    await t.tenant("acme");
  });
  afterAll(() => t.close());

  it("an observation recorded for a log-only key is never replayed to an enforcing key: 409", async () => {
    const observing = (await t.key("acme", { logOnly: true })).apiKey;
    const enforcing = (await t.key("acme")).apiKey;
    const body = { action: "signup", session: "s-mode", subject: { userAgent: "curl/8.5.0" } };
    const call = (apiKey: string) =>
      t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: { ...bearer(apiKey), "idempotency-key": "mode-1" },
        payload: body,
      });
    const observed = await call(observing);
    expect(observed.json()).toMatchObject({ decision: "allow", enforcementMode: "log_only" });
    expect((await call(observing)).headers["idempotent-replayed"]).toBe("true");
    const enforced = await call(enforcing);
    expect(enforced.statusCode).toBe(409);
    expect(enforced.json()).toMatchObject({ code: "idempotency_conflict" });
  });
});
