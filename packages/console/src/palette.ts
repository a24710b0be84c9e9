/**
 * Decision colours (Okabe–Ito, told apart with the common colour-vision deficiencies). Colour is
 * never the only cue: series also differ in dash pattern, and tables name everything in words.
 */
export const DECISION_COLORS = {
  allow: "#0072b2",
  challenge: "#c98a00",
  deny: "#d55e00",
} as const;
