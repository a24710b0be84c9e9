/**
 * The proof-of-work search ("sha256-prefix": the lowercase hex SHA-256 of the UTF-8 string
 * seed + nonce must begin with `difficulty` zeros), written for this one job. Warden's seeds are 32
 * hex characters; with a 16-character nonce the message is 48 bytes, a single SHA-256 block whose
 * first ten words (seed and the nonce's first half) stay fixed while the last two (the nonce's
 * counter) change. So the first ten rounds and the fixed parts of the message schedule are computed
 * once per 2^32 nonces, the eleventh once per 2^16, and each candidate costs the remaining 53 rounds
 * (unrolled, generated/powRounds.ts), with no allocation and no string. Other seed lengths use the
 * plain path (`digestHex`).
 */

import { scanCounters } from "./generated/powRounds.js";

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const H = [
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
].map((x) => x | 0);

/** The 32-bit big-endian word of four lowercase hex characters, for every 16-bit value. */
let hexWords: Uint32Array | undefined;
export function hexWordTable(): Uint32Array {
  if (hexWords) return hexWords;
  const digits = [48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102];
  hexWords = new Uint32Array(65536);
  for (let v = 0; v < 65536; v++) {
    hexWords[v] =
      (((digits[(v >>> 12) & 15] as number) << 24) |
        ((digits[(v >>> 8) & 15] as number) << 16) |
        ((digits[(v >>> 4) & 15] as number) << 8) |
        (digits[v & 15] as number)) >>>
      0;
  }
  return hexWords;
}

const hex4 = (v: number) => v.toString(16).padStart(4, "0");
const hex8 = (v: number) => (v >>> 0).toString(16).padStart(8, "0");

/** The nonce for a block and a counter: 8 hex characters of block, 8 of counter. */
export function nonceFor(block: number, counter: number): string {
  return hex8(block) + hex4(counter >>> 16) + hex4(counter & 0xffff);
}

/** Whether a hex digest's first `difficulty` characters are "0". */
export function meetsDifficulty(hex: string, difficulty: number): boolean {
  for (let i = 0; i < difficulty; i++) if (hex.charCodeAt(i) !== 48) return false;
  return true;
}

/** SHA-256 of an ASCII string, as lowercase hex: the plain path, and the check of every answer. */
export function digestHex(text: string): string {
  const bytes = new TextEncoder().encode(text);
  const blocks = Math.ceil((bytes.length + 9) / 64);
  const m = new Uint8Array(blocks * 64);
  m.set(bytes);
  m[bytes.length] = 0x80;
  const bits = bytes.length * 8;
  const view = new DataView(m.buffer);
  view.setUint32(m.length - 8, Math.floor(bits / 2 ** 32));
  view.setUint32(m.length - 4, bits >>> 0);
  const h = H.slice();
  const w = new Uint32Array(64);
  for (let b = 0; b < blocks; b++) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(b * 64 + i * 4);
    compress(h, w);
  }
  return h.map((x) => (x >>> 0).toString(16).padStart(8, "0")).join("");
}

function compress(h: number[], w: Uint32Array): void {
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15] as number;
    const y = w[i - 2] as number;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[i] = ((w[i - 16] as number) + s0 + (w[i - 7] as number) + s1) | 0;
  }
  let [a, b, c, d, e, f, g, hh] = h as [number, number, number, number, number, number, number, number];
  for (let i = 0; i < 64; i++) {
    const t1 =
      (hh +
        (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        ((e & f) ^ (~e & g)) +
        (K[i] as number) +
        (w[i] as number)) |
      0;
    const t2 =
      ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) ^ (a & c) ^ (b & c))) |
      0;
    hh = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  const out = [a, b, c, d, e, f, g, hh];
  for (let i = 0; i < 8; i++) h[i] = ((h[i] as number) + (out[i] as number)) | 0;
}

/** The inner search over counters (generated/powRounds.ts; solverBench also measures a WebAssembly one). */
export type CounterScan = typeof scanCounters;

export interface SearchResult {
  /** The nonce found, or undefined when the range held none. */
  nonce: string | undefined;
  /** Candidates tried. */
  hashes: number;
}

/**
 * Tries the counters [from, to) of `block` (at most 2^32 of them) for `seed`; returns the first
 * nonce whose digest meets `difficulty`. Seeds of 32 ASCII characters take the fast path.
 */
export function searchBlock(
  seed: string,
  difficulty: number,
  block: number,
  from: number,
  to: number,
  scan: CounterScan = scanCounters,
): SearchResult {
  if (seed.length !== 32 || !/^[\x20-\x7e]*$/.test(seed))
    return searchPlain(seed, difficulty, block, from, to);
  if (difficulty <= 0)
    return from < to ? { nonce: nonceFor(block, from), hashes: 1 } : { nonce: undefined, hashes: 0 };
  const table = hexWordTable();
  const w = new Int32Array(64);
  for (let i = 0; i < 8; i++)
    w[i] =
      (seed.charCodeAt(i * 4) << 24) |
      (seed.charCodeAt(i * 4 + 1) << 16) |
      (seed.charCodeAt(i * 4 + 2) << 8) |
      seed.charCodeAt(i * 4 + 3);
  w[8] = table[block >>> 16] as number;
  w[9] = table[block & 0xffff] as number;
  w[12] = 0x80000000 | 0;
  w[13] = 0;
  w[14] = 0;
  w[15] = 48 * 8;
  // Rounds 0-9: seed and block words only.
  let a = H[0] as number;
  let b = H[1] as number;
  let c = H[2] as number;
  let d = H[3] as number;
  let e = H[4] as number;
  let f = H[5] as number;
  let g = H[6] as number;
  let h = H[7] as number;
  for (let i = 0; i < 10; i++) {
    const t1 =
      (h +
        (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        ((e & f) ^ (~e & g)) +
        (K[i] as number) +
        (w[i] as number)) |
      0;
    const t2 =
      ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) ^ (a & c) ^ (b & c))) |
      0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  const s0 = (x: number) => ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
  const s1 = (x: number) => ((x >>> 17) | (x << 15)) ^ ((x >>> 19) | (x << 13)) ^ (x >>> 10);
  // W16 depends on fixed words only.
  w[16] = (s1(w[14] as number) + (w[9] as number) + s0(w[1] as number) + (w[0] as number)) | 0;
  // The digest's first word must have its top 4·difficulty bits zero (more than 8 digits: checked in full).
  const shift = 32 - 4 * Math.min(difficulty, 8);
  const state = new Int32Array(8);
  let hashes = 0;
  let counter = from;
  while (counter < to) {
    const hi = counter >>> 16;
    const loEnd = Math.min(65536, to - hi * 65536);
    const w10 = table[hi] as number;
    w[10] = w10;
    // Round 10, and the schedule words that depend on W10 but not W11.
    const t1 =
      (h +
        (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        ((e & f) ^ (~e & g)) +
        (K[10] as number) +
        w10) |
      0;
    const t2 =
      ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) ^ (a & c) ^ (b & c))) |
      0;
    const a10 = (t1 + t2) | 0;
    const b10 = a;
    const c10 = b;
    const d10 = c;
    const e10 = (d + t1) | 0;
    const f10 = e;
    const g10 = f;
    const h10 = g;
    const w17 = (s1(w[15] as number) + w10 + s0(w[2] as number) + (w[1] as number)) | 0;
    const w19 = (s1(w17) + (w[12] as number) + s0(w[4] as number) + (w[3] as number)) | 0;
    const w21 = (s1(w19) + (w[14] as number) + s0(w[6] as number) + (w[5] as number)) | 0;
    const w23 = (s1(w21) + (w[16] as number) + s0(w[8] as number) + (w[7] as number)) | 0;
    w[17] = w17;
    w[19] = w19;
    w[21] = w21;
    w[23] = w23;
    state[0] = a10;
    state[1] = b10;
    state[2] = c10;
    state[3] = d10;
    state[4] = e10;
    state[5] = f10;
    state[6] = g10;
    state[7] = h10;
    for (let lo = counter & 0xffff; lo < loEnd; ) {
      const found = scan(state, w, table, lo, loEnd, shift);
      hashes += (found < 0 ? loEnd : found + 1) - lo;
      if (found < 0) break;
      const nonce = nonceFor(block, hi * 65536 + found);
      // A candidate is confirmed on the plain path (and in full when difficulty passes 8 digits).
      if (meetsDifficulty(digestHex(seed + nonce), difficulty)) return { nonce, hashes };
      lo = found + 1;
    }
    counter = hi * 65536 + loEnd;
  }
  return { nonce: undefined, hashes };
}

function searchPlain(
  seed: string,
  difficulty: number,
  block: number,
  from: number,
  to: number,
): SearchResult {
  let hashes = 0;
  for (let counter = from; counter < to; counter++) {
    hashes++;
    const nonce = nonceFor(block, counter);
    if (meetsDifficulty(digestHex(seed + nonce), difficulty)) return { nonce, hashes };
  }
  return { nonce: undefined, hashes };
}
