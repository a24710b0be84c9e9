import { fileURLToPath } from "node:url";
import { WardenClient, wardenChallengeRoutes, wardenGate } from "@warden/client/express";
import express from "express";

// WARDEN_URL, WARDEN_API_KEY, WARDEN_TENANT and WARDEN_TICKET_SECRET; ADMIN_TOKEN for the feedback route.
const client = WardenClient.fromEnv();
const adminToken = process.env.ADMIN_TOKEN;
if (!adminToken) throw new Error("ADMIN_TOKEN is not set");
const accounts = new Map<string, { eventId: string }>();
const INVALID_EMAIL = { error: "bad_request", code: "invalid_email", message: "Enter an email address." };
const UNKNOWN_ACCOUNT = { error: "not_found", code: "unknown_account", message: "No such account." };
const WELCOME = '<p id="result" data-state="created">Your account is ready.</p>';

const app = express();
app.use(express.static(fileURLToPath(new URL("../public", import.meta.url))));
app.use("/warden", express.static(fileURLToPath(new URL(".", import.meta.resolve("@warden/browser")))));
app.use(express.json(), express.urlencoded(), wardenChallengeRoutes({ client }));

const gate = wardenGate({ client, action: "signup", email: (body) => body.email });
app.post("/signup", gate, (req, res) => {
  const { form, eventId } = req.warden;
  if (typeof form.email !== "string") return void res.status(400).json(INVALID_EMAIL);
  accounts.set(form.email.trim().toLowerCase(), { eventId });
  res.status(201).send(WELCOME);
});

// Feedback: tell Warden what an account turned out to be (here, abuse found later by your team).
app.post("/admin/accounts/:email/abuse", async (req, res) => {
  if (req.get("authorization") !== `Bearer ${adminToken}`) return void res.status(401).end();
  const account = accounts.get(req.params.email);
  if (!account) return void res.status(404).json(UNKNOWN_ACCOUNT);
  const sent = await client.feedback.send({ eventId: account.eventId, outcome: "abuse_confirmed" });
  res.status(sent.ok ? 200 : 502).json(sent.ok ? sent.value : sent.error);
});

const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  console.log(`Signup (Express) on http://127.0.0.1:${(server.address() as { port: number }).port}`);
});
