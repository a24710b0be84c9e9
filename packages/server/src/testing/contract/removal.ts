import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventRecord } from "../../domain.js";
import { type ChallengeRecord, noneRemoved, type RemovedRows, type Store } from "../../store/interfaces.js";
import { testEvent } from "../harness.js";

const DAY = 86_400_000;
/** The retention cutoff of these tests: events created before it go. */
const CUTOFF = 400 * DAY;
const OLD = CUTOFF - 30 * DAY;
const NEW = CUTOFF + DAY;
/** Stored answers live far beyond every time used here. */
const LIVE = 10_000 * DAY;

const none = noneRemoved();

/**
 * A challenged attempt's rows and what to read of them, for removal tests on stores `a` (writes) and
 * `b` (reads: another process's pool on PostgreSQL), read when called.
 */
export function removalFixtures(stores: { a(): Store; b(): Store }) {
  const event = (id: string, tenantId: string, createdAt: number, extra: Partial<EventRecord> = {}) =>
    testEvent(id, { tenantId, createdAt, session: `s-${id}`, attempt: `att-${id}`, ...extra });
  const challenge = (id: string, on: EventRecord): ChallengeRecord => ({
    id,
    tenantId: on.tenantId,
    eventId: on.id,
    session: on.session ?? "",
    method: "proof_of_work",
    difficulty: 4,
    seed: "seed",
    instructions: { type: "pow" },
    issuedAt: on.createdAt + 1,
    expiresAt: on.createdAt + DAY,
    clearedAt: null,
    redeemedAt: null,
    proofRef: null,
    completionKey: null,
    attempt: on.attempt,
    eventDegraded: false,
  });
  const observation = (id: string, on: EventRecord, outcome: string, value: number | null = null) => ({
    feedbackId: id,
    tenantId: on.tenantId,
    eventId: on.id,
    outcome,
    value,
    unit: value === null ? null : "usd",
    source: null,
    observedAt: on.createdAt + 2,
    receivedAt: on.createdAt + 2,
    identity: `identity-${id}`,
  });
  const verifyKey = (tenantId: string, key: string) => ({ tenantId, operation: "verify", key });
  const feedbackKey = (tenantId: string, key: string) => ({ tenantId, operation: "feedback", key });
  const answer = (body: unknown) => ({ fingerprint: "f", statusCode: 200, body });

  /**
   * A challenged attempt with everything that can hang off it: the first event (recorded under an
   * idempotency key), a challenge cleared and redeemed by a re-verify, an effective and a quarantined
   * observation (resolved) on the first event with a feedback key, an observation on the re-verify.
   */
  async function fullAttempt(tag: string, tenantId: string, at: number) {
    const first = event(`evt_${tag}`, tenantId, at, {
      decision: "challenge",
      wouldBeDecision: "challenge",
      emailHash: `hash-${tag}`,
    });
    expect(
      await stores.a().events.record(first, {
        ...verifyKey(tenantId, `k-${tag}`),
        response: answer({ eventId: first.id }),
        expiresAt: LIVE,
      }),
    ).toEqual({ kind: "recorded" });
    const chl = challenge(`chl_${tag}`, first);
    expect(await stores.a().challenges.insert(chl)).toBe(true);
    expect((await stores.a().challenges.clear(tenantId, chl.id, chl.session, at + 10)).kind).toBe("cleared");
    const reverify = event(`evt_${tag}_rev`, tenantId, at + 20, {
      session: first.session,
      attempt: first.attempt,
      // As verify writes it: the clear stood in for scoring.
      decidedBy: "clear",
      risk: null,
      emailHash: `hash-${tag}`,
    });
    const redeem = {
      challengeId: chl.id,
      eventId: first.id,
      session: chl.session,
      attempt: first.attempt ?? "",
      clearedSince: at,
    };
    expect(await stores.a().events.record(reverify, undefined, undefined, { redeem })).toEqual({
      kind: "recorded",
    });
    const conv = await stores
      .a()
      .feedback.append(observation(`fb_${tag}_conv`, first, "converted", 100), [], {
        ...feedbackKey(tenantId, `fk-${tag}`),
        response: answer({ ok: true, eventId: first.id }),
        expiresAt: LIVE,
      });
    expect(conv.kind).toBe("appended");
    const abuse = await stores
      .a()
      .feedback.append(observation(`fb_${tag}_abuse`, first, "abuse_confirmed"), ["converted"], undefined);
    expect(abuse).toMatchObject({ kind: "appended", observation: { status: "quarantined" } });
    const resolved = await stores.a().feedback.resolve(
      {
        tenantId,
        feedbackId: `fb_${tag}_abuse`,
        eventId: first.id,
        resolution: "reject",
        note: null,
        keyId: "key_reviewer",
        resolvedAt: at + 40,
      },
      [],
    );
    expect(resolved.kind).toBe("resolved");
    const burn = await stores
      .a()
      .feedback.append(observation(`fb_${tag}_rev`, reverify, "credit_burn", 5), [], undefined);
    expect(burn.kind).toBe("appended");
    return { first, reverify, chl };
  }

  /** Whether anything of the attempt is still readable. */
  async function traces(tenantId: string, tag: string) {
    const first = `evt_${tag}`;
    return {
      events: [
        await stores.b().events.get(tenantId, first),
        await stores.b().events.get(tenantId, `${first}_rev`),
      ].filter(Boolean).length,
      challenge: (await stores.b().challenges.get(tenantId, `chl_${tag}`)) !== undefined,
      clearUsed: await stores.b().challenges.eventClearUsed(tenantId, first),
      observations:
        (await stores.b().feedback.listForEvent(tenantId, first)).length +
        (await stores.b().feedback.listForEvent(tenantId, `${first}_rev`)).length,
      resolutions: (await stores.b().feedback.resolutionsForEvent(tenantId, first)).length,
      answers:
        Number((await stores.b().idempotency.find(verifyKey(tenantId, `k-${tag}`), 0)) !== undefined) +
        Number((await stores.b().idempotency.find(feedbackKey(tenantId, `fk-${tag}`), 0)) !== undefined),
    };
  }
  const whole = {
    events: 2,
    challenge: true,
    clearUsed: true,
    observations: 3,
    resolutions: 1,
    answers: 2,
  };
  const gone = {
    events: 0,
    challenge: false,
    clearUsed: false,
    observations: 0,
    resolutions: 0,
    answers: 0,
  };
  const oneAttempt: RemovedRows = {
    events: 2,
    challenges: 1,
    clears: 1,
    observations: 3,
    resolutions: 1,
    idempotentAnswers: 2,
  };

  return {
    event,
    challenge,
    observation,
    verifyKey,
    feedbackKey,
    answer,
    fullAttempt,
    traces,
    whole,
    gone,
    oneAttempt,
  };
}

/**
 * Retention and erasure (EventRemovalStore), the same on every adapter: events go with everything on
 * them, in chunks, tenant by tenant; nothing on a removed event can be written afterwards; concurrent
 * writers on two handles (two processes' pools on PostgreSQL) leave nothing behind. Tenants "d1"–"d4",
 * "p1" and "p2"; each test uses its own, or its own events, since retention reads every tenant.
 */
export function removalContract(
  name: string,
  open: () => Promise<Store>,
  openSecond?: () => Promise<Store>,
): void {
  describe(`event removal contract: ${name}`, () => {
    let a: Store;
    let b: Store;
    beforeAll(async () => {
      a = await open();
      b = openSecond ? await openSecond() : a;
      for (const id of ["d1", "d2", "d3", "d4", "p1", "p2"])
        await a.tenants.create({ id, rawPii: false, logOnly: false, createdAt: 1 });
    });
    afterAll(async () => {
      await a.close();
      if (b !== a) await b.close();
    });

    const {
      event,
      challenge,
      observation,
      verifyKey,
      feedbackKey,
      answer,
      fullAttempt,
      traces,
      gone,
      whole,
      oneAttempt,
    } = removalFixtures({ a: () => a, b: () => b });

    it("retention removes events created before the cutoff with their challenges, clear, observations, resolutions and stored answers; newer ones keep theirs", async () => {
      await fullAttempt("old1", "d1", OLD);
      await fullAttempt("new1", "d1", NEW);
      await fullAttempt("old2", "d2", OLD + 5);
      await fullAttempt("new2", "d2", NEW + 5);
      expect(await traces("d1", "old1")).toEqual(whole);

      const removed = await a.removal.olderThan(CUTOFF);
      expect(removed).toEqual({
        events: 4,
        challenges: 2,
        clears: 2,
        observations: 6,
        resolutions: 2,
        idempotentAnswers: 4,
      });
      expect(await traces("d1", "old1")).toEqual(gone);
      expect(await traces("d2", "old2")).toEqual(gone);
      expect(await traces("d1", "new1")).toEqual(whole);
      expect(await traces("d2", "new2")).toEqual(whole);
      // Idempotent: nothing older is left.
      expect(await b.removal.olderThan(CUTOFF)).toEqual(none);
    });

    it("retention with a cutoff per tenant: each tenant's own, and none of a tenant whose cutoff is undefined", async () => {
      await fullAttempt("old4", "p1", OLD);
      await fullAttempt("new4", "p1", NEW);
      await fullAttempt("old5", "p2", OLD);
      await fullAttempt("new5", "p2", NEW);
      const asked: string[] = [];
      const removed = await a.removal.olderThan(async (tenantId) => {
        asked.push(tenantId);
        if (tenantId === "p1") return NEW + 1;
        return undefined;
      });
      expect(asked).toContain("p1");
      expect(asked).toContain("p2");
      expect(removed).toMatchObject({ events: 4, challenges: 2, clears: 2, observations: 6 });
      expect(await traces("p1", "old4")).toEqual(gone);
      expect(await traces("p1", "new4")).toEqual(gone);
      expect(await traces("p2", "old5")).toEqual(whole);
      expect(await traces("p2", "new5")).toEqual(whole);
      // p2's own turn, so that the tests after this one find none of its events older than CUTOFF.
      expect(await b.removal.olderThan(async (id) => (id === "p2" ? LIVE : undefined))).toMatchObject({
        events: 4,
      });
    });

    it("after retention the ledger, the outcomes and calibration count only the events kept: no observation outlives its event", async () => {
      await fullAttempt("old3", "d3", OLD);
      await fullAttempt("new3", "d3", NEW);
      const all = { since: 0, until: LIVE };
      const beforeRows = await b.feedback.aggregate("d3", {});
      expect(beforeRows.find((r) => r.outcome === "converted")?.count).toBe(2);
      await a.removal.olderThan(CUTOFF);

      const rows = await b.feedback.aggregate("d3", {});
      expect(rows.map((r) => [r.outcome, r.status, r.count, r.total]).sort()).toEqual([
        ["abuse_confirmed", "rejected", 1, 0],
        ["converted", "effective", 1, 100],
        ["credit_burn", "effective", 1, 5],
      ]);
      expect(await b.feedback.aggregate("d3", { since: OLD, until: CUTOFF })).toEqual([]);
      expect(await b.insights.outcomeCounts("d3", all)).toEqual([
        { decision: "challenge", outcome: "converted", events: 1, observations: 1 },
        { decision: "challenge", outcome: "credit_burn", events: 1, observations: 1 },
      ]);
      const labelled = await b.insights.labelledRiskGroups("d3", all, ["abuse_confirmed", "credit_burn"]);
      expect(labelled.reduce((n, g) => n + g.count, 0)).toBe(1);
      expect((await b.insights.riskGroups("d3", all)).reduce((n, g) => n + g.count, 0)).toBe(1);
      expect(await b.insights.challengeCounts("d3", all, NEW)).toEqual([
        { method: "proof_of_work", issued: 1, cleared: 1, expired: 0, redeemed: 1 },
      ]);
      expect(await b.feedback.get("d3", "fb_old3_conv")).toBeUndefined();
      expect(await b.feedback.get("d3", "fb_new3_conv")).toBeDefined();
    });

    it("an attempt goes as a whole: the re-verify that redeemed an old event's clear goes with it, even when newer than the cutoff", async () => {
      const { reverify } = await fullAttempt("span", "d4", CUTOFF - 10);
      expect(reverify.createdAt).toBeGreaterThan(CUTOFF);
      expect((await a.removal.olderThan(CUTOFF)).events).toBe(2);
      expect(await traces("d4", "span")).toEqual(gone);
    });

    /** More events than two chunks of any adapter hold (at most 1,000: SqlRuntime.removalPace). */
    const MANY = 2_500;
    /** `n` events of d4 older than the cutoff, recorded a hundred at a time. */
    const recordOld = async (prefix: string, n: number) => {
      for (let i = 0; i < n; i += 100)
        await Promise.all(
          Array.from({ length: Math.min(100, n - i) }, (_, j) =>
            a.events.record(event(`${prefix}_${i + j}`, "d4", OLD + i + j), undefined),
          ),
        );
    };

    it("retention goes through more events than one chunk holds, every one of them", async () => {
      await recordOld("evt_bulk", MANY);
      await a.events.record(event("evt_bulk_keep", "d4", NEW), undefined);
      expect((await a.removal.olderThan(CUTOFF)).events).toBe(MANY);
      expect(await b.events.get("d4", "evt_bulk_0")).toBeUndefined();
      expect(await b.events.get("d4", `evt_bulk_${MANY - 1}`)).toBeUndefined();
      expect(await b.events.get("d4", "evt_bulk_keep")).toBeDefined();
    });

    it("two processes' passes at once remove every old event, each once between them", async () => {
      await recordOld("evt_twice", MANY);
      const [first, second] = await Promise.all([a.removal.olderThan(CUTOFF), b.removal.olderThan(CUTOFF)]);
      expect(first.events + second.events).toBe(MANY);
      expect(await b.removal.olderThan(CUTOFF)).toEqual(none);
    });

    it("an aborted signal stops it before its next chunk; a later run removes the rest", async () => {
      await recordOld("evt_stop", 5);
      const abort = new AbortController();
      abort.abort();
      expect((await a.removal.olderThan(CUTOFF, abort.signal)).events).toBe(0);
      expect((await a.removal.olderThan(CUTOFF)).events).toBe(5);
    });

    it("erasure removes one subject's events in one tenant only, by email hash, network, session or eventId; a second run removes nothing", async () => {
      const keep = event("evt_er_other_tenant", "d2", NEW, { emailHash: "hash-er", network: "192.0.2.0/24" });
      await a.events.record(keep, undefined);
      await a.events.record(event("evt_er_bystander", "d1", NEW, { network: "198.51.100.0/24" }), undefined);

      await fullAttempt("er_mail", "d1", NEW);
      await a.events.record(event("evt_er_mail2", "d1", NEW + 1, { emailHash: "hash-er_mail" }), undefined);
      expect(await a.removal.erase("d1", { emailHash: "hash-er_mail" })).toEqual({
        ...oneAttempt,
        events: 3,
      });
      expect(await traces("d1", "er_mail")).toEqual(gone);
      expect(await b.events.get("d1", "evt_er_mail2")).toBeUndefined();
      expect(await b.removal.erase("d1", { emailHash: "hash-er_mail" })).toEqual(none);

      await a.events.record(event("evt_er_net", "d1", NEW, { network: "192.0.2.0/24" }), undefined);
      expect((await a.removal.erase("d1", { network: "192.0.2.0/24" })).events).toBe(1);
      expect(await b.events.get("d1", "evt_er_net")).toBeUndefined();

      const { first } = await fullAttempt("er_sess", "d1", NEW);
      expect(await a.removal.erase("d1", { session: first.session ?? "" })).toEqual(oneAttempt);
      expect(await traces("d1", "er_sess")).toEqual(gone);

      // One event of an attempt names the whole attempt.
      await fullAttempt("er_evt", "d1", NEW);
      expect(await a.removal.erase("d1", { eventId: "evt_er_evt_rev" })).toEqual(oneAttempt);
      expect(await traces("d1", "er_evt")).toEqual(gone);

      // Another tenant's events of the same subject, and the tenant's other events, are untouched.
      expect(await b.removal.erase("d1", { eventId: keep.id })).toEqual(none);
      expect(await b.events.get("d2", keep.id)).toEqual(keep);
      expect(await b.events.get("d1", "evt_er_bystander")).toBeDefined();
    });

    it("erasure takes the degraded events of the subject's attempts (same session and fingerprint), though they hold no email hash or network, with their challenge, feedback and stored answers; another attempt's and another tenant's stay", async () => {
      const attempt = { session: "s-dg", attempt: "att-dg", decision: "challenge" as const };
      const scored = event("evt_dg_scored", "d2", NEW, {
        ...attempt,
        emailHash: "hash-dg",
        network: "192.0.2.0/24",
      });
      await a.events.record(scored, undefined);
      /** A degraded event as verify wrote them before they recorded the subject's protected values. */
      const degraded = (id: string, tenantId: string, extra: Partial<EventRecord> = {}) =>
        event(id, tenantId, NEW + 1, {
          ...attempt,
          degraded: true,
          decidedBy: "degraded",
          risk: null,
          signals: { degraded: true },
          emailHash: null,
          network: null,
          ...extra,
        });
      const outage = degraded("evt_dg_degraded", "d2");
      expect(
        await a.events.record(outage, {
          ...verifyKey("d2", "k-dg"),
          response: answer({ eventId: outage.id }),
          expiresAt: LIVE,
        }),
      ).toEqual({ kind: "recorded" });
      expect(await a.challenges.insert(challenge("chl_dg", outage))).toBe(true);
      const observed = await a.feedback.append(observation("fb_dg", outage, "chargeback", 9), [], {
        ...feedbackKey("d2", "fk-dg"),
        response: answer({ ok: true, eventId: outage.id }),
        expiresAt: LIVE,
      });
      expect(observed.kind).toBe("appended");
      // Someone else's attempt in the same session, and the same attempt in another tenant.
      const otherAttempt = degraded("evt_dg_other_attempt", "d2", { attempt: "att-other" });
      const otherTenant = degraded("evt_dg_other_tenant", "d4");
      await a.events.record(otherAttempt, undefined);
      await a.events.record(otherTenant, undefined);

      expect(await a.removal.erase("d2", { emailHash: "hash-dg" })).toEqual({
        events: 2,
        challenges: 1,
        clears: 0,
        observations: 1,
        resolutions: 0,
        idempotentAnswers: 2,
      });
      expect(await b.events.get("d2", scored.id)).toBeUndefined();
      expect(await b.events.get("d2", outage.id)).toBeUndefined();
      expect(await b.challenges.get("d2", "chl_dg")).toBeUndefined();
      expect(await b.feedback.get("d2", "fb_dg")).toBeUndefined();
      expect(await b.idempotency.find(verifyKey("d2", "k-dg"), 0)).toBeUndefined();
      expect(await b.idempotency.find(feedbackKey("d2", "fk-dg"), 0)).toBeUndefined();
      expect(await b.events.get("d2", otherAttempt.id)).toEqual(otherAttempt);
      expect(await b.events.get("d4", otherTenant.id)).toEqual(otherTenant);
      expect(await b.removal.erase("d2", { emailHash: "hash-dg" })).toEqual(none);
    });

    it("a degraded event of an erased subject written after the erasure (a spool restored, a queue flushed) is refused as erased, its stored answer too; one created after the erasure, another subject's and another tenant's are written", async () => {
      const late = (id: string, tenantId: string, createdAt: number, extra: Partial<EventRecord> = {}) =>
        event(id, tenantId, createdAt, {
          session: `s-${id}`,
          attempt: `att-${id}`,
          decision: "challenge",
          degraded: true,
          decidedBy: "degraded",
          risk: null,
          signals: { degraded: true },
          emailHash: "hash-late",
          network: "198.51.100.0/24",
          ...extra,
        });
      const before = Date.now() - 1000;
      expect(await a.removal.erase("d5", { emailHash: "hash-late" })).toEqual(none);
      const spooled = late("evt_late_spooled", "d5", before);
      expect(
        await a.events.record(spooled, {
          ...verifyKey("d5", "k-late"),
          response: answer({ eventId: spooled.id }),
          expiresAt: LIVE,
        }),
      ).toEqual({ kind: "erased" });
      expect(await b.events.get("d5", spooled.id)).toBeUndefined();
      expect(await b.idempotency.find(verifyKey("d5", "k-late"), 0)).toBeUndefined();
      // Named by its network, session or id instead of its email hash: refused alike.
      await a.removal.erase("d5", { network: "203.0.113.0/24" });
      await a.removal.erase("d5", { session: "s-by-session" });
      await a.removal.erase("d5", { eventId: "evt_late_by_id" });
      for (const refused of [
        late("evt_late_by_network", "d5", before, { emailHash: null, network: "203.0.113.0/24" }),
        late("evt_late_by_session", "d5", before, {
          emailHash: null,
          network: null,
          session: "s-by-session",
        }),
        late("evt_late_by_id", "d5", before, { emailHash: null, network: null }),
      ]) {
        expect(await a.events.record(refused, undefined)).toEqual({ kind: "erased" });
        expect(await b.events.get("d5", refused.id)).toBeUndefined();
      }
      // The same person's attempt after the erasure, another person's, another tenant's: written.
      const kept = [
        late("evt_late_after", "d5", Date.now() + DAY),
        late("evt_late_other", "d5", before, { emailHash: "hash-other", network: "192.0.2.0/24" }),
        late("evt_late_tenant", "d6", before),
      ];
      for (const e of kept) {
        expect(await a.events.record(e, undefined)).toEqual({ kind: "recorded" });
        expect(await b.events.get(e.tenantId, e.id)).toEqual(e);
      }
      // A scored event is written as it comes: the erasure concerns what was stored before it.
      const scored = late("evt_late_scored", "d5", before, {
        degraded: false,
        decidedBy: "model",
        risk: { estimate: 0.5, low: 0.4, high: 0.6, raised: true },
      });
      expect(await a.events.record(scored, undefined)).toEqual({ kind: "recorded" });
    });

    it("nothing attaches to a removed event: feedback is refused as for an unknown event, a resolution finds nothing, a challenge is not issued", async () => {
      const { first } = await fullAttempt("after", "d2", NEW);
      const quarantined = await a.feedback.append(
        observation("fb_after_fp", first, "abuse_confirmed", 1),
        ["converted"],
        undefined,
      );
      expect(quarantined).toMatchObject({ observation: { status: "quarantined" } });
      await a.removal.erase("d2", { eventId: first.id });

      expect(
        await b.feedback.append(observation("fb_after_late", first, "chargeback", 20), [], {
          ...feedbackKey("d2", "fk-after-late"),
          response: answer({ ok: true, eventId: first.id }),
          expiresAt: LIVE,
        }),
      ).toEqual({ kind: "unknown_event" });
      // Nothing was written, the idempotency key included.
      expect(await b.feedback.listForEvent("d2", first.id)).toEqual([]);
      expect(await b.idempotency.find(feedbackKey("d2", "fk-after-late"), 0)).toBeUndefined();
      expect(
        await b.feedback.resolve(
          {
            tenantId: "d2",
            feedbackId: "fb_after_fp",
            eventId: first.id,
            resolution: "accept",
            note: null,
            keyId: "key_reviewer",
            resolvedAt: NEW + 50,
          },
          ["converted"],
        ),
      ).toEqual({ kind: "unknown" });
      expect(await b.feedback.resolutionsForEvent("d2", first.id)).toEqual([]);
      expect(await b.challenges.insert(challenge("chl_after_late", first))).toBe(false);
      expect(await b.challenges.get("d2", "chl_after_late")).toBeUndefined();
    });

    it("concurrent feedback and challenges on events being erased leave nothing behind", async () => {
      const results = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const on = event(`evt_race_${i}`, "d3", NEW + i, { decision: "challenge" });
          await a.events.record(on, undefined);
          const [appended, issued, removed] = await Promise.all([
            b.feedback.append(observation(`fb_race_${i}`, on, "chargeback", 10), [], undefined),
            b.challenges.insert(challenge(`chl_race_${i}`, on)),
            a.removal.erase("d3", { eventId: on.id }),
          ]);
          return { on, appended, issued, removed };
        }),
      );
      for (const { on, appended, issued, removed } of results) {
        // Whichever came first, nothing of the event is left, and what was written was removed.
        expect(await b.events.get("d3", on.id)).toBeUndefined();
        expect(await b.feedback.listForEvent("d3", on.id)).toEqual([]);
        expect(await b.insights.challengesForEvent("d3", on.id)).toEqual([]);
        expect(removed.observations).toBe(appended.kind === "appended" ? 1 : 0);
        expect(removed.challenges).toBe(issued ? 1 : 0);
      }
    });
  });
}
