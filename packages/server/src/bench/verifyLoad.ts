import { randomBytes } from "node:crypto";
import autocannon from "autocannon";

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

const CHROME_UA =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const HEADERS = {
  "accept-language": "en-US,en;q=0.9",
  "sec-fetch-site": "same-origin",
  "sec-fetch-mode": "navigate",
  "sec-fetch-dest": "document",
  "sec-ch-ua": '"Chromium";v="131"',
  "sec-ch-ua-mobile": "?0",
  "sec-ch-ua-platform": '"Windows"',
};

/** A realistic signup: browser evidence, a hashed email and a /24 that vary per request. */
export function body(): string {
  return JSON.stringify({
    action: "signup",
    session: randomBytes(12).toString("base64url"),
    surface: "app.example.com/signup",
    subject: {
      userAgent: CHROME_UA,
      headers: HEADERS,
      emailSha256: randomBytes(32).toString("hex"),
      ipTrunc: `198.51.${Math.floor(Math.random() * 256)}.0/24`,
    },
  });
}

export interface Run {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** Loads one verify endpoint with varying realistic bodies. */
export async function load(
  target: { url: string; apiKey: string },
  seconds: number,
  rate?: number,
  connections = CONNECTIONS,
): Promise<Run> {
  const result = await autocannon({
    url: `${target.url}/v1/verify`,
    connections,
    duration: seconds,
    ...(rate ? { overallRate: rate } : {}),
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
