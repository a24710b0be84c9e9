import { eraseSubject, erasureSubject } from "../admin/erasure.js";
import type { ErasureSubject, RemovedRows } from "../store/interfaces.js";
import { type Command, requireTenant, str, UsageError } from "./command.js";

/** `warden erase`: one person's data, removed from one tenant. */
export const ERASE_COMMANDS: Record<string, Command> = {
  erase: {
    usage:
      "warden erase --tenant <tenantId> (--email <address> | --email-sha256 <hex> | --ip <address or network> | --session <session> | --event <eventId>) [--json]",
    summary:
      "Erase one person's data from a tenant: every event of that email address (hashed as verify hashes it), network (the /24 or /48 verify keeps: everyone in it), session or eventId, with the other event and the degraded events of each attempt, their challenges, clears, feedback observations, resolutions and stored idempotent answers. Prints what it deleted; running it again deletes nothing more (docs/security-model.md, Erasure).",
    options: {
      tenant: { type: "string" },
      email: { type: "string" },
      "email-sha256": { type: "string" },
      ip: { type: "string" },
      session: { type: "string" },
      event: { type: "string" },
      json: { type: "boolean" },
    },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const tenantId = requireTenant(str(values.tenant));
      const subject = erasureSubject({
        email: str(values.email),
        emailSha256: str(values["email-sha256"]),
        ip: str(values.ip),
        session: str(values.session),
        eventId: str(values.event),
      });
      if (typeof subject === "string") throw new UsageError(subject);
      const removed = await ctx.withStore((store) => eraseSubject(store, tenantId, subject));
      if (!removed) {
        ctx.io.err(`unknown tenant "${tenantId}"`);
        return 1;
      }
      if (values.json) ctx.io.out(JSON.stringify({ tenantId, subject, removed }));
      else ctx.io.out(`erased from tenant ${tenantId}, ${describe(subject)}: ${summary(removed)}`);
      return 0;
    },
  },
};

function describe(subject: ErasureSubject): string {
  if ("emailHash" in subject) return `email sha256 ${subject.emailHash}`;
  if ("network" in subject) return `network ${subject.network}`;
  if ("session" in subject) return `session ${subject.session}`;
  return `event ${subject.eventId}`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function summary(r: RemovedRows): string {
  return [
    plural(r.events, "event", "events"),
    plural(r.challenges, "challenge", "challenges"),
    plural(r.clears, "clear", "clears"),
    plural(r.observations, "feedback observation", "feedback observations"),
    plural(r.resolutions, "resolution", "resolutions"),
    plural(r.idempotentAnswers, "stored idempotent answer", "stored idempotent answers"),
  ].join(", ");
}
