// The same search as src/generated/powRounds.ts, as WebAssembly text, for measuring the two side by
// side (solverBench). Memory layout: state after round 10 at 0 (8 words), message words 0-23 at 32,
// the hex-word table (65,536 words) at 128. scan(from, to, shift) answers like scanCounters.
import wabtInit from "wabt";
import { K } from "./generateKernel.mjs";

const g = (n) => `(local.get $${n})`;
const rotr = (x, n) => `(i32.rotr ${x} (i32.const ${n}))`;
const xor3 = (a, b, c) => `(i32.xor (i32.xor ${a} ${b}) ${c})`;
const add = (...xs) => xs.reduce((acc, x) => `(i32.add ${acc} ${x})`);

export function renderWat() {
  const locals = [];
  const body = [];
  for (let i = 0; i < 64; i++) locals.push(`(local $w${i} i32)`);
  for (const n of "abcdefgh") locals.push(`(local $${n}0 i32)`);
  for (let i = 11; i < 64; i++) locals.push(`(local $a${i} i32) (local $e${i} i32) (local $t${i} i32)`);
  locals.push("(local $lo i32)");
  for (let i = 0; i < 24; i++)
    if (![11, 18, 20, 22].includes(i))
      body.push(`(local.set $w${i} (i32.load offset=${32 + i * 4} (i32.const 0)))`);
  for (const [i, n] of [..."abcdefgh"].entries())
    body.push(`(local.set $${n}0 (i32.load offset=${i * 4} (i32.const 0)))`);
  body.push("(local.set $lo (local.get $from))");
  body.push("(block $done (loop $next");
  body.push("(br_if $done (i32.ge_u (local.get $lo) (local.get $to)))");
  body.push("(local.set $w11 (i32.load offset=128 (i32.shl (local.get $lo) (i32.const 2))))");
  const s0 = (x) => xor3(rotr(g(x), 7), rotr(g(x), 18), `(i32.shr_u ${g(x)} (i32.const 3))`);
  const s1 = (x) => xor3(rotr(g(x), 17), rotr(g(x), 19), `(i32.shr_u ${g(x)} (i32.const 10))`);
  const sched = (i) =>
    `(local.set $w${i} ${add(s1(`w${i - 2}`), g(`w${i - 7}`), s0(`w${i - 15}`), g(`w${i - 16}`))})`;
  for (const i of [18, 20, 22]) body.push(sched(i));
  let [a, b, c, d, e, f, gg, h] = ["a0", "b0", "c0", "d0", "e0", "f0", "g0", "h0"];
  for (let i = 11; i < 64; i++) {
    if (i >= 24) body.push(sched(i));
    const S1 = xor3(rotr(g(e), 6), rotr(g(e), 11), rotr(g(e), 25));
    const ch = `(i32.xor (i32.and ${g(e)} ${g(f)}) (i32.and (i32.xor ${g(e)} (i32.const -1)) ${g(gg)}))`;
    body.push(`(local.set $t${i} ${add(g(h), S1, ch, `(i32.const ${K[i] | 0})`, g(`w${i}`))})`);
    body.push(`(local.set $e${i} (i32.add ${g(d)} (local.get $t${i})))`);
    const S0 = xor3(rotr(g(a), 2), rotr(g(a), 13), rotr(g(a), 22));
    const maj = xor3(`(i32.and ${g(a)} ${g(b)})`, `(i32.and ${g(a)} ${g(c)})`, `(i32.and ${g(b)} ${g(c)})`);
    body.push(`(local.set $a${i} (i32.add (local.get $t${i}) (i32.add ${S0} ${maj})))`);
    [h, gg, f, e, d, c, b, a] = [gg, f, e, `e${i}`, c, b, a, `a${i}`];
  }
  body.push(
    `(if (i32.eqz (i32.shr_u (i32.add ${g(a)} (i32.const ${0x6a09e667 | 0})) (local.get $shift))) (then (return (local.get $lo))))`,
  );
  body.push("(local.set $lo (i32.add (local.get $lo) (i32.const 1)))");
  body.push("(br $next)))");
  body.push("(i32.const -1)");
  return `(module (memory (export "memory") 5)
(func (export "scan") (param $from i32) (param $to i32) (param $shift i32) (result i32)
${locals.join("\n")}
${body.join("\n")}))`;
}

/** The module's binary. */
export async function wasmKernelBinary() {
  const wabt = await wabtInit();
  const module = wabt.parseWat("pow.wat", renderWat());
  module.validate();
  return Buffer.from(module.toBinary({}).buffer);
}
