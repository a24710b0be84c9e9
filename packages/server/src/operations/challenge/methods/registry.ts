import type { Method } from "../method.js";
import { deviceAttestationMethod } from "./deviceAttestation/deviceAttestation.js";
import { paymentPreauthMethod } from "./paymentPreauth/paymentPreauth.js";
import { proofOfWorkMethod } from "./proofOfWork/proofOfWork.js";
import { webBotAuthStepUpMethod } from "./webBotAuthStepUp/webBotAuthStepUp.js";

/**
 * The challenge methods that can be issued, one line each: a new method is a folder of methods/ and
 * one line here. Which one a challenge gets follows the caller's `prefer`, not this order; this order
 * is the one the request schema lists their proofs in. email_otp, which the API names, is not here: it
 * is never issued, so `prefer` never selects it.
 */
export const METHODS: readonly Method[] = [
  proofOfWorkMethod,
  paymentPreauthMethod,
  webBotAuthStepUpMethod,
  deviceAttestationMethod,
];

/** The floor: issued when no method the caller prefers can be; issuable for every tenant and event. */
export const FLOOR: Method = proofOfWorkMethod;
