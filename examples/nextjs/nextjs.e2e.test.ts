import { exampleSuite } from "../../packages/server/src/testing/exampleSuite.js";

exampleSuite("nextjs", {
  server: [
    "app/signup/route.ts",
    "app/warden/challenge/[step]/route.ts",
    "app/admin/accounts/[email]/abuse/route.ts",
    "lib/accounts.ts",
  ],
  pages: ["app/layout.tsx", "app/page.tsx"],
  // `next start`'s own line, then its "Ready": the app serves from then on.
  ready: /- Local:\s+(http:\/\/\S+)[\s\S]*Ready in/,
  // No telemetry sent from the test's build and server.
  env: { NEXT_TELEMETRY_DISABLED: "1" },
});
