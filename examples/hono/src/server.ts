import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { serveStatic } from "@hono/node-server/serve-static";
import { registerWardenChallengeRoutes, WardenClient, wardenMiddleware } from "@warden/client/hono";
import { Hono } from "hono";

// WARDEN_URL, WARDEN_API_KEY, WARDEN_TENANT and WARDEN_TICKET_SECRET; ADMIN_TOKEN for the feedback route.
const client = WardenClient.fromEnv();
const adminToken = process.env.ADMIN_TOKEN;
if (!adminToken) throw new Error("ADMIN_TOKEN is not set");
const accounts = new Map<string, { eventId: string }>();
const INVALID_EMAIL = { error: "bad_request", code: "invalid_email", message: "Enter an email address." };
const UNKNOWN_ACCOUNT = { error: "not_found", code: "unknown_account", message: "No such account." };
const WELCOME = '<p id="result" data-state="created">Your account is ready.</p>';

const app = new Hono();
registerWardenChallengeRoutes(app, { client });
const gate = wardenMiddleware({ client, action: "signup", email: (body) => body.email });
app.post("/signup", gate, (c) => {
  const { form, eventId } = c.get("warden");
  if (typeof form.email !== "string") return c.json(INVALID_EMAIL, 400);
  accounts.set(form.email.trim().toLowerCase(), { eventId });
  return c.html(WELCOME, 201);
});

// Feedback: tell Warden what an account turned out to be (here, abuse found later by your team).
app.post("/admin/accounts/:email/abuse", async (c) => {
  if (c.req.header("authorization") !== `Bearer ${adminToken}`) return c.body(null, 401);
  const account = accounts.get(c.req.param("email"));
  if (!account) return c.json(UNKNOWN_ACCOUNT, 404);
  const sent = await client.feedback.send({ eventId: account.eventId, outcome: "abuse_confirmed" });
  return sent.ok ? c.json(sent.value) : c.json(sent.error ?? null, 502);
});

// The page, and @warden/browser's files at /warden/.
const browserFiles = fileURLToPath(new URL(".", import.meta.resolve("@warden/browser")));
app.use(
  "/warden/*",
  serveStatic({ root: browserFiles, rewriteRequestPath: (p) => p.replace("/warden", "") }),
);
app.use("/*", serveStatic({ root: fileURLToPath(new URL("../public", import.meta.url)) }));
serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(process.env.PORT ?? 3000) }, (info) =>
  console.log(`Signup (Hono) on http://127.0.0.1:${info.port}`),
);
