/** The API's shapes, taken from the generated OpenAPI types so they cannot drift from the server. */
import type { paths } from "./generated/openapi.js";

type Json<T> = T extends { content: { "application/json": infer B } } ? B : never;

export type VerifyRequest = Json<paths["/v1/verify"]["post"]["requestBody"]>;
export type Subject = VerifyRequest["subject"];
export type Verdict = Json<paths["/v1/verify"]["post"]["responses"][200]>;
export type ChallengeRequest = Json<paths["/v1/challenge"]["post"]["requestBody"]>;
export type Challenge = Json<paths["/v1/challenge"]["post"]["responses"][200]>;
export type PageTokenRequest = Json<paths["/v1/page-tokens"]["post"]["requestBody"]>;
export type PageToken = Json<paths["/v1/page-tokens"]["post"]["responses"][200]>;
export type FeedbackRequest = Json<paths["/v1/feedback"]["post"]["requestBody"]>;
export type FeedbackAck = Json<paths["/v1/feedback"]["post"]["responses"][200]>;
export type LedgerSummary = Json<paths["/v1/ledger/summary"]["get"]["responses"][200]>;
export type LedgerQuery = NonNullable<paths["/v1/ledger/summary"]["get"]["parameters"]["query"]>;
/** The Error schema (docs/api.md#errors). */
export type WardenErrorBody = Json<paths["/v1/verify"]["post"]["responses"]["4XX"]>;
