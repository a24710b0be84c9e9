import { randomBytes } from "node:crypto";
import { CHROME_HEADERS, CHROME_UA } from "@warden/server/dist/lib/chromeNavigation.js";
import autocannon from "autocannon";
import { type Run, steadyLoad } from "./steadyLoad.js";

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
/**
 * Seconds at the steady rate before each steady measurement, not counted: the steady state is
 * measured, not the server catching up after the peaks (on SQLite the checkpointer then has a backlog
 * of database pages to copy and sync).
 */
export const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 10);

/**
 * A realistic signup: browser evidence, a hashed email and a /24 that vary per request, and the
 * page's environment as @warden/browser reports it (its own canvas hash per person), so that verify
 * counts the request's shape and environment (signals/campaign.ts) as it does a real page's.
 */
export function body(): string {
  return JSON.stringify({
    action: "signup",
    session: randomBytes(12).toString("base64url"),
    surface: "app.example.com/signup",
    subject: {
      userAgent: CHROME_UA,
      headers: CHROME_HEADERS,
      emailSha256: randomBytes(32).toString("hex"),
      ipTrunc: `198.51.${Math.floor(Math.random() * 256)}.0/24`,
      page: {
        environment: {
          screen: "1920x1080",
          colorDepth: 24,
          pixelRatio: 1,
          cores: 8,
          memory: 8,
          touchPoints: 0,
          timezone: "Europe/Berlin",
          languages: "de-DE,de,en",
          platform: "Win32",
          renderer: "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0, D3D11)",
          canvas: randomBytes(6).toString("hex"),
          canvasNoise: false,
        },
      },
    },
  });
}

export type { Run };

/** Loads one verify endpoint at full speed (closed loop) with varying realistic bodies. */
export async function load(
  target: { url: string; apiKey: string },
  seconds: number,
  connections = CONNECTIONS,
): Promise<Run> {
  const result = await autocannon({
    url: `${target.url}/v1/verify`,
    connections,
    duration: seconds,
    method: "POST",
    headers: { authorization: `Bearer ${target.apiKey}`, "content-type": "application/json" },
    requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/**
 * Verify on several processes at one steady total rate (open loop), requests spread evenly, measured
 * after SETTLE_SECONDS at that rate.
 */
export async function steadyVerify(
  targets: { url: string; apiKey: string }[],
  seconds: number,
  rate: number,
): Promise<Run> {
  const endpoints = targets.map((t) => ({
    origin: t.url,
    path: "/v1/verify",
    headers: { authorization: `Bearer ${t.apiKey}`, "content-type": "application/json" },
    body,
  }));
  if (SETTLE_SECONDS > 0) await steadyLoad(endpoints, SETTLE_SECONDS, rate);
  return steadyLoad(endpoints, seconds, rate);
}
