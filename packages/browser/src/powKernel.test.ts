import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { digestHex, meetsDifficulty, nonceFor, searchBlock } from "./powKernel.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

describe("the proof-of-work kernel", () => {
  it("digestHex is SHA-256 for messages of one and several blocks", () => {
    for (const text of ["", "abc", "a".repeat(55), "a".repeat(56), "a".repeat(64), "x".repeat(200)]) {
      expect(digestHex(text)).toBe(sha256(text));
    }
  });

  it("finds, on the fast path, exactly the first nonce a plain search finds, for random seeds and difficulties 1-3", () => {
    for (let round = 0; round < 20; round++) {
      const seed = randomBytes(16).toString("hex");
      const difficulty = 1 + (round % 3);
      const block = randomBytes(4).readUInt32BE(0);
      const start = round * 70_000; // crosses 16-bit boundaries of the counter
      const found = searchBlock(seed, difficulty, block, start, start + 200_000);
      let expected: string | undefined;
      for (let c = start; c < start + 200_000 && expected === undefined; c++) {
        const nonce = nonceFor(block, c);
        if (sha256(seed + nonce).startsWith("0".repeat(difficulty))) expected = nonce;
      }
      expect(found.nonce).toBe(expected);
      if (found.nonce) expect(meetsDifficulty(sha256(seed + found.nonce), difficulty)).toBe(true);
    }
  });

  it("answers only nonces the server accepts (16 characters, digest with the issued number of zeros), on both paths", () => {
    const seed = randomBytes(16).toString("hex");
    const fast = searchBlock(seed, 4, 7, 0, 2 ** 24);
    const plain = searchBlock(`${seed}x`, 3, 7, 0, 2 ** 20);
    for (const [s, r, d] of [
      [seed, fast, 4],
      [`${seed}x`, plain, 3],
    ] as const) {
      expect(r.nonce).toMatch(/^[0-9a-f]{16}$/);
      expect(sha256(s + r.nonce).slice(0, d)).toBe("0".repeat(d));
    }
  });

  it("difficulty 0 takes the first nonce of the range", () => {
    expect(searchBlock(randomBytes(16).toString("hex"), 0, 3, 10, 20)).toEqual({
      nonce: nonceFor(3, 10),
      hashes: 1,
    });
  });

  it("reports an empty range as no nonce, with the hashes it tried", () => {
    const seed = randomBytes(16).toString("hex");
    expect(searchBlock(seed, 8, 1, 5, 5)).toEqual({ nonce: undefined, hashes: 0 });
    const none = searchBlock(seed, 8, 1, 0, 1000);
    expect(none.hashes).toBe(none.nonce === undefined ? 1000 : none.hashes);
  });
});
