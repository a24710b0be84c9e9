import type { Issue, Method } from "./method.js";
import { FLOOR } from "./methods/registry.js";

/**
 * The method a challenge is issued with (docs/api.md#post-v1challenge-and-re-verify): the first entry
 * of `prefer` that names a method of `methods` issuable for this tenant and event, else the floor,
 * proof_of_work. An entry that names none (email_otp, or an unknown name) is skipped. Only preferred
 * methods are asked (a payment provider's key is read only for a caller that would take a payment
 * challenge), and each of them is asked before one is chosen, so a store fault while asking any fails
 * the issue whatever its place in `prefer`.
 */
export async function selectMethod(
  prefer: readonly string[] | undefined,
  methods: readonly Method[],
  issue: Issue,
): Promise<Method> {
  const preferred = [...new Set(prefer)].flatMap((name) => methods.filter((m) => m.name === name));
  const issuable: boolean[] = [];
  for (const method of preferred) issuable.push(await method.issuable(issue));
  return preferred.find((_, i) => issuable[i]) ?? FLOOR;
}
