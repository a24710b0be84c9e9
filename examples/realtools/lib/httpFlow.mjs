// The "bot that tries", over any HTTP client: load the page once (as a browser would), post the
// signup JSON, and when answered 428 with a ticket, issue the challenge through the app's routes,
// solve the proof of work in Node, complete it and send the form again with the ticket.
import { solvePow } from "./pow.mjs";
import { sleep } from "./time.mjs";

/**
 * @typedef {{ method: "GET" | "POST", path: string, body?: Record<string, unknown>, kind: "navigate" | "fetch" | "script" }} HttpRequest
 *   kind: what a browser would be doing: loading the page, the page's fetch(), or loading one of its scripts
 * @typedef {{ status: number, text: string, json: any }} HttpAnswer
 * @typedef {(request: HttpRequest) => Promise<HttpAnswer>} Send
 */

export function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * One signup. `pageFields` adds what the page would have added to the body (lib/pageEvidence.mjs).
 * @param {Send} send
 * @param {{ email: string, name: string }} identity
 * @param {{
 *   pageFields: (page: import("./pageEvidence.mjs").PageContext) => Promise<Record<string, unknown>>,
 *   personBehaviours?: Record<string, number>[],
 * }} opts personBehaviours: what this run's people's pages sent, for a page model that copies them
 */
export async function httpSignup(send, identity, { pageFields, personBehaviours }) {
  const page = await send({ method: "GET", path: "/", kind: "navigate" });
  const fields = await pageFields({
    send,
    identity,
    pageHtml: page.text,
    ...(personBehaviours ? { personBehaviours } : {}),
  });
  const form = { email: identity.email, name: identity.name };
  const post = (body) => send({ method: "POST", path: "/signup", body, kind: "fetch" });
  let answer = await post({ ...form, ...fields });
  for (let round = 0; round < 3; round++) {
    if (answer.status === 428 && answer.json?.code === "warden_unavailable") {
      // As the page says: try again in a few seconds.
      await sleep((answer.json.retryAfterSeconds ?? 5) * 1000);
      answer = await post({ ...form, ...fields });
      continue;
    }
    if (answer.status !== 428 || answer.json?.code !== "warden_challenge") break;
    const ticket = answer.json.ticket;
    const issued = await send({
      method: "POST",
      path: "/warden/challenge/issue",
      body: { ticket },
      kind: "fetch",
    });
    if (issued.status !== 200 || issued.json?.method !== "proof_of_work") break;
    const { seed, difficulty } = issued.json.instructions;
    const { nonce } = await solvePow(seed, difficulty);
    const completed = await send({
      method: "POST",
      path: "/warden/challenge/complete",
      body: { ticket, challengeId: issued.json.challengeId, proof: { nonce } },
      kind: "fetch",
    });
    if (completed.status !== 200) break;
    answer = await post({
      ...form,
      wardenTicket: ticket,
      wardenChallengeId: issued.json.challengeId,
      ...fields,
    });
  }
  return answer;
}
