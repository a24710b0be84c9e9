import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * `npm run example` as docs/integration.md prints it with other ports: the variables it names
 * (WARDEN_PORT, PORT_EXAMPLE) move Warden and the form where it says. What `npm run example` runs
 * after its build (`npm start -w @warden/example-signup`) is run here with the guide's variables,
 * each given a free port. Needs the repository built.
 */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

describe("npm run example with the guide's ports", () => {
  it("puts Warden and the form on the ports the guide's variables name", async () => {
    const guide = fs.readFileSync(path.join(REPO, "docs/integration.md"), "utf8");
    const line = guide.split("\n").find((l) => /^\S+=\d+ .*npm run example/.test(l));
    expect(line).toBeDefined();
    const names = [...(line as string).matchAll(/(\w+)=(\d+) /g)].map((m) => m[1] as string);
    expect(names).toEqual(["WARDEN_PORT", "PORT_EXAMPLE"]);
    const [wardenPort, formPort] = [await freePort(), await freePort()];
    const child = spawn("npm", ["start", "-w", "@warden/example-signup"], {
      cwd: REPO,
      env: { ...process.env, WARDEN_PORT: String(wardenPort), PORT_EXAMPLE: String(formPort) },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    try {
      const printed = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const url = /Signup example on (http:\/\/\S+)/.exec(out)?.[1];
          if (url) resolve(url);
        });
        child.once("exit", (code) => reject(new Error(`npm start exited (${code}): ${out}`)));
      });
      expect(printed).toBe(`http://127.0.0.1:${formPort}`);
      expect((await fetch(`http://127.0.0.1:${wardenPort}/readyz`)).status).toBe(200);
      expect(await (await fetch(printed)).text()).toContain("<form");
    } finally {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
    }
  }, 60_000);
});
