import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { wasmKernelBinary } from "../tooling/wasmKernel.mjs";
import { type CounterScan, hexWordTable, searchBlock } from "./powKernel.js";

/** The WebAssembly kernel solverBench measures answers exactly like the JavaScript one. */
describe("the WebAssembly proof-of-work kernel", () => {
  it("finds the same first nonce as the JavaScript kernel for random seeds", async () => {
    const instance = await WebAssembly.instantiate(await WebAssembly.compile(await wasmKernelBinary()));
    const exports = instance.exports as {
      memory: WebAssembly.Memory;
      scan(from: number, to: number, shift: number): number;
    };
    const memory = new Int32Array(exports.memory.buffer);
    memory.set(hexWordTable(), 32);
    const wasmScan: CounterScan = (s, w, _table, from, to, shift) => {
      memory.set(s, 0);
      memory.set(w.subarray(0, 24), 8);
      return exports.scan(from, to, shift);
    };
    for (let round = 0; round < 10; round++) {
      const seed = randomBytes(16).toString("hex");
      const block = randomBytes(4).readUInt32BE(0);
      const difficulty = 2 + (round % 3);
      const from = round * 50_000;
      const js = searchBlock(seed, difficulty, block, from, from + 300_000);
      expect(searchBlock(seed, difficulty, block, from, from + 300_000, wasmScan)).toEqual(js);
    }
  });
});
