/** The decision model and its parameters (decisionModel.ts); recorded with every event. */
export const ENGINE_VERSION = "warden-engine/9";
