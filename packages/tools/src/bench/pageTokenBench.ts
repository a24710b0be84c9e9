import { startBenchServer } from "./startBenchServer.js";

/**
 * What page evidence adds to a person's page load: the latency of POST /v1/page-tokens next to the
 * cheapest route (GET /healthz) and to verify, one request at a time from one client, interleaved
 * round by round so the machine's drift hits all three alike. `node packages/tools/dist/bench/pageTokenBench.js`
 */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const ROUNDS = 3;

const subject = {
  userAgent:
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  ipTrunc: "198.51.100.0/24",
};

async function main(): Promise<void> {
  const server = await startBenchServer("verify");
  try {
    const call = (route: "healthz" | "page" | "verify") => {
      if (route === "healthz") return fetch(`${server.url}/healthz`);
      const [url, body] =
        route === "page"
          ? [`${server.url}/v1/page-tokens`, { subject }]
          : [`${server.url}/v1/verify`, { action: "signup", subject }];
      return fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    };
    const times: Record<string, number[]> = { healthz: [], page: [], verify: [] };
    for (const route of ["healthz", "page", "verify"] as const)
      for (let i = 0; i < 200; i++) await (await call(route)).arrayBuffer();
    for (let round = 0; round < ROUNDS; round++) {
      for (const route of ["healthz", "page", "verify"] as const) {
        for (let i = 0; i < REQUESTS / ROUNDS; i++) {
          const started = performance.now();
          const res = await call(route);
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`${route} answered ${res.status}`);
          times[route]?.push(performance.now() - started);
        }
      }
    }
    const q = (xs: number[], p: number) =>
      [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)] ?? Number.NaN;
    const rows = (["healthz", "page", "verify"] as const).map((route) => {
      const xs = times[route] ?? [];
      return `| ${route === "page" ? "POST /v1/page-tokens" : route === "verify" ? "POST /v1/verify" : "GET /healthz"} | ${q(xs, 0.5).toFixed(2)} | ${q(xs, 0.99).toFixed(2)} |`;
    });
    const added = q(times.page ?? [], 0.5) - q(times.healthz ?? [], 0.5);
    process.stdout.write(
      [
        "",
        `| route (${REQUESTS} requests each, one at a time) | p50 ms | p99 ms |`,
        "|---|---:|---:|",
        ...rows,
        "",
        `page token over the cheapest route, p50: +${added.toFixed(2)} ms (the page asks once, in the background, as it loads)`,
        "",
      ].join("\n"),
    );
  } finally {
    server.child.kill("SIGTERM");
  }
}

await main();
