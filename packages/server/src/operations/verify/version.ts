/** The decision model and its parameters (policy.ts); recorded with every event. */
export const ENGINE_VERSION = "warden-engine/3";
