import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import { WardenClient, wardenFastify, wardenPreHandler } from "@warden/client/fastify";
import Fastify from "fastify";

// WARDEN_URL, WARDEN_API_KEY, WARDEN_TENANT and WARDEN_TICKET_SECRET; ADMIN_TOKEN for the feedback route.
const client = WardenClient.fromEnv();
const adminToken = process.env.ADMIN_TOKEN;
if (!adminToken) throw new Error("ADMIN_TOKEN is not set");
const accounts = new Map<string, { eventId: string }>();
const INVALID_EMAIL = { error: "bad_request", code: "invalid_email", message: "Enter an email address." };
const UNKNOWN_ACCOUNT = { error: "not_found", code: "unknown_account", message: "No such account." };
const WELCOME = '<p id="result" data-state="created">Your account is ready.</p>';

const app = Fastify();
await app.register(fastifyStatic, { root: fileURLToPath(new URL("../public", import.meta.url)) });
const browserFiles = fileURLToPath(new URL(".", import.meta.resolve("@warden/browser")));
await app.register(fastifyStatic, { root: browserFiles, prefix: "/warden/", decorateReply: false });
await app.register(wardenFastify, { client });

const gate = wardenPreHandler({ client, action: "signup", email: (body) => body.email });
app.post("/signup", { preHandler: gate }, async (request, reply) => {
  const { form, eventId } = request.warden;
  if (typeof form.email !== "string") return reply.code(400).send(INVALID_EMAIL);
  accounts.set(form.email.trim().toLowerCase(), { eventId });
  return reply.code(201).type("text/html").send(WELCOME);
});

// Feedback: tell Warden what an account turned out to be (here, abuse found later by your team).
app.post<{ Params: { email: string } }>("/admin/accounts/:email/abuse", async (request, reply) => {
  if (request.headers.authorization !== `Bearer ${adminToken}`) return reply.code(401).send();
  const account = accounts.get(request.params.email);
  if (!account) return reply.code(404).send(UNKNOWN_ACCOUNT);
  const sent = await client.feedback.send({ eventId: account.eventId, outcome: "abuse_confirmed" });
  return sent.ok ? sent.value : reply.code(502).send(sent.error);
});

const address = await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? 3000) });
console.log(`Signup (Fastify) on ${address}`);
