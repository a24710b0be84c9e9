import { type Static, Type } from "@sinclair/typebox";
import { Subject } from "../verify/schema.js";

export const PageTokenRequest = Type.Object(
  {
    subject: Type.Optional(
      Type.Pick(Subject, ["ip", "ipTrunc", "userAgent", "headers"], {
        additionalProperties: true,
        description:
          "The page request's network and user agent, read as verify reads them (the SDK's subjectFromRequest); the token is bound to short hashes of both.",
      }),
    ),
  },
  { additionalProperties: true },
);
export type PageTokenRequest = Static<typeof PageTokenRequest>;

export const PageTokenResponse = Type.Object({
  pageToken: Type.String({
    description: "Hand it to the page; the form sends it back as subject.page.token.",
  }),
  expiresAt: Type.String({ format: "date-time" }),
});
