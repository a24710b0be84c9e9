// `npm run example`: starts Warden on its embedded SQLite store (in examples/signup/data), creates the
// example tenant and a key the first time, and serves the signup form on http://127.0.0.1:3000.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createSignupApp } from "./app.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const warden = path.join(here, "../../packages/server/bin/warden.js");
const dataDir = path.join(here, "data");
fs.mkdirSync(dataDir, { recursive: true });
const wardenPort = Number(process.env.WARDEN_PORT ?? 8080);
const env = {
  ...process.env,
  WARDEN_DATABASE_URL: `sqlite:${path.join(dataDir, "warden.db")}`,
  WARDEN_DEGRADED_SPOOL_DIR: path.join(dataDir, "spool"),
  PORT: String(wardenPort),
};
const settingsFile = path.join(dataDir, "example.json");
if (!fs.existsSync(settingsFile)) {
  execFileSync(process.execPath, [warden, "tenant", "create", "example"], { env });
  const key = JSON.parse(
    execFileSync(
      process.execPath,
      [
        warden,
        "key",
        "create",
        "--tenant",
        "example",
        "--scopes",
        "verify:write,challenge:write,feedback:write",
        "--json",
      ],
      { env },
    ).toString(),
  );
  // The page runs watchPage(), so a signup that never ran it is a program (docs/api.md, page evidence).
  const policyFile = path.join(dataDir, "policy.json");
  fs.writeFileSync(policyFile, JSON.stringify({ actions: { signup: { requirePage: true } } }));
  execFileSync(process.execPath, [warden, "policy", "set", "--tenant", "example", "--file", policyFile], {
    env,
  });
  const settings = { apiKey: key.apiKey, ticketSecret: randomBytes(32).toString("base64url") };
  fs.writeFileSync(settingsFile, JSON.stringify(settings), { mode: 0o600 });
}
const { apiKey, ticketSecret } = JSON.parse(fs.readFileSync(settingsFile, "utf8"));
const server = spawn(process.execPath, [warden, "serve"], { env, stdio: ["ignore", "inherit", "inherit"] });
const wardenUrl = `http://127.0.0.1:${wardenPort}`;
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${wardenUrl}/readyz`)).ok) break;
  } catch {
    if (i > 100) throw new Error("Warden did not start");
  }
  await new Promise((r) => setTimeout(r, 200));
}
const { app } = createSignupApp({ wardenUrl, apiKey, tenantId: "example", ticketSecret });
const port = Number(process.env.PORT_EXAMPLE ?? 3000);
const listener = app.listen(port, "127.0.0.1", () =>
  console.log(`Signup example on http://127.0.0.1:${port}`),
);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    listener.close();
    server.kill("SIGTERM");
  });
}
