import { wardenChallengeRoute } from "@warden/client/next";

// POST /warden/challenge/page, /issue and /complete: what @warden/browser's page script and widget call.
export const POST = wardenChallengeRoute();
