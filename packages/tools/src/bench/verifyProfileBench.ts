import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type CpuProfile, summarise } from "./cpuProfile.js";
import { processCpuMs } from "./processCpu.js";
import { type BenchServer, startBenchServer } from "./startBenchServer.js";
import { steadyLoad } from "./steadyLoad.js";
import { body } from "./verifyLoad.js";

/**
 * Where a verify's server CPU goes, next to the minimal handler's (parse, one ES256 signature, one
 * insert): both servers take the same fixed open-loop rate at once; for the measured seconds each
 * reports its process's CPU per request (user + system of all its threads, as capacityBench does)
 * and a sampled profile of its main thread, split by what the time was spent in. Both profiles
 * cost the same per sample, so the two columns stay comparable; the process figure is unprofiled.
 *
 *   BENCH_PROFILE_RATE     requests/s to each server (default 800)
 *   BENCH_PROFILE_SECONDS  measured seconds (default 10), after 3 s of the same rate
 *   BENCH_PROFILE_KEEP     set: the two .cpuprofile files are kept (their folder is printed) to open
 *                          in Chrome's DevTools
 */
const RATE = Number(process.env.BENCH_PROFILE_RATE ?? 800);
const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 10);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-profile-"));
const modes = ["verify", "minimal"] as const;
const servers: BenchServer[] = [];
try {
  for (const mode of modes) {
    servers.push(
      await startBenchServer(mode, {
        ...process.env,
        BENCH_CPU_PROFILE: path.join(dir, `${mode}.cpuprofile`),
      }),
    );
  }
  const endpoint = (s: BenchServer) => ({
    origin: s.url,
    path: "/v1/verify",
    headers: { authorization: `Bearer ${s.apiKey}`, "content-type": "application/json" },
    body,
  });
  await Promise.all(servers.map((s) => steadyLoad([endpoint(s)], 3, RATE)));
  for (const s of servers) s.child.kill("SIGUSR2");
  const before = servers.map((s) => processCpuMs(s.child.pid) ?? Number.NaN);
  const runs = await Promise.all(servers.map((s) => steadyLoad([endpoint(s)], SECONDS, RATE)));
  const cpu = servers.map((s, i) => (processCpuMs(s.child.pid) ?? Number.NaN) - (before[i] as number));
  await Promise.all(
    servers.map(
      (s) =>
        new Promise((resolve) => {
          s.child.once("exit", resolve);
          s.child.kill("SIGTERM");
        }),
    ),
  );

  const answered = runs.map((r) => Math.round(r.rps * SECONDS));
  const perRequest = (us: number, i: number) => us / 1000 / (answered[i] as number);
  const summaries = modes.map((mode) =>
    summarise(JSON.parse(fs.readFileSync(path.join(dir, `${mode}.cpuprofile`), "utf8")) as CpuProfile),
  );
  const names = [...new Set(summaries.flatMap((s) => [...s.keys()]))]
    .filter((n) => n !== "idle")
    .sort((a, b) => (summaries[0]?.get(b) ?? 0) - (summaries[0]?.get(a) ?? 0));
  const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : "–");
  const busy = summaries.map((s, i) =>
    perRequest(
      [...s].reduce((t, [n, us]) => t + (n === "idle" ? 0 : us), 0),
      i,
    ),
  );
  const lines = [
    `${RATE} req/s to each server for ${SECONDS} s; degraded ${runs[0]?.degraded}, p99 verify ${runs[0]?.p99} ms, minimal ${runs[1]?.p99} ms`,
    "",
    "| ms of CPU per request | verify | minimal handler | verify − minimal |",
    "| --- | ---: | ---: | ---: |",
    `| **server process, all threads** | **${ms((cpu[0] as number) / (answered[0] as number))}** | **${ms((cpu[1] as number) / (answered[1] as number))}** | ${ms((cpu[0] as number) / (answered[0] as number) - (cpu[1] as number) / (answered[1] as number))} |`,
    `| main thread, sampled | ${ms(busy[0] as number)} | ${ms(busy[1] as number)} | ${ms((busy[0] as number) - (busy[1] as number))} |`,
    ...names.map((n) => {
      const v = perRequest(summaries[0]?.get(n) ?? 0, 0);
      const m = perRequest(summaries[1]?.get(n) ?? 0, 1);
      return `| ${n} | ${ms(v)} | ${ms(m)} | ${ms(v - m)} |`;
    }),
  ];
  process.stdout.write(
    `\nverify's CPU, piece by piece, beside the minimal handler's\n\n${lines.join("\n")}\n`,
  );
} finally {
  for (const s of servers) if (s.child.exitCode === null) s.child.kill("SIGKILL");
  if (!process.env.BENCH_PROFILE_KEEP) fs.rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`profiles kept in ${dir}\n`);
}
