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

import { H, K, scanCounters } from "./generated/powRounds.js";

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
  const h = Int32Array.from(H);
  const w = new Int32Array(64);
  for (let b = 0; b < blocks; b++) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(b * 64 + i * 4);
    compress(h, w);
  }
  return Array.from(h, (x) => (x >>> 0).toString(16).padStart(8, "0")).join("");
}

/** Rounds [from, to) of SHA-256 on the working state `s` (a..h), in place. */
function rounds(s: Int32Array, w: ArrayLike<number>, from: number, to: number): void {
  let a = s[0] as number;
  let b = s[1] as number;
  let c = s[2] as number;
  let d = s[3] as number;
  let e = s[4] as number;
  let f = s[5] as number;
  let g = s[6] as number;
  let h = s[7] as number;
  for (let i = from; i < to; i++) {
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
  s.set([a, b, c, d, e, f, g, h]);
}

const sigma0 = (x: number) => ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
const sigma1 = (x: number) => ((x >>> 17) | (x << 15)) ^ ((x >>> 19) | (x << 13)) ^ (x >>> 10);

/** One block: the message schedule from its 16 words, 64 rounds, added into `h`. */
function compress(h: Int32Array, w: Int32Array): void {
  for (let i = 16; i < 64; i++)
    w[i] =
      ((w[i - 16] as number) +
        sigma0(w[i - 15] as number) +
        (w[i - 7] as number) +
        sigma1(w[i - 2] as number)) |
      0;
  const s = h.slice();
  rounds(s, w, 0, 64);
  for (let i = 0; i < 8; i++) h[i] = ((h[i] as number) + (s[i] as number)) | 0;
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
  const after9 = Int32Array.from(H);
  rounds(after9, w, 0, 10);
  // W16 depends on fixed words only.
  w[16] = (sigma1(w[14] as number) + (w[9] as number) + sigma0(w[1] as number) + (w[0] as number)) | 0;
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
    state.set(after9);
    rounds(state, w, 10, 11);
    const w17 = (sigma1(w[15] as number) + w10 + sigma0(w[2] as number) + (w[1] as number)) | 0;
    const w19 = (sigma1(w17) + (w[12] as number) + sigma0(w[4] as number) + (w[3] as number)) | 0;
    const w21 = (sigma1(w19) + (w[14] as number) + sigma0(w[6] as number) + (w[5] as number)) | 0;
    const w23 = (sigma1(w21) + (w[16] as number) + sigma0(w[8] as number) + (w[7] as number)) | 0;
    w[17] = w17;
    w[19] = w19;
    w[21] = w21;
    w[23] = w23;
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
