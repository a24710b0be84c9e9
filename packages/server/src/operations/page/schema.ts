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
    probe: Type.Optional(
      Type.Boolean({
        description:
          "Hand the page a layout probe to measure (@warden/browser watchPage does): verify then requires the measurements with the form, so a client without a browser engine cannot use the token.",
      }),
    ),
    pow: Type.Optional(
      Type.Boolean({
        description:
          "Hand the page the proof of work a challenge on its attempt will be sealed with, for it to solve in the background while the person fills the form in (@warden/browser watchPage does).",
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
  probe: Type.Optional(
    Type.Object(
      {
        boxes: Type.Array(
          Type.Object({
            style: Type.Array(Type.Array(Type.String(), { minItems: 2, maxItems: 2 })),
            children: Type.Array(Type.Array(Type.Array(Type.String(), { minItems: 2, maxItems: 2 }))),
          }),
        ),
      },
      {
        description:
          "With probe asked for: boxes for the page to lay out and measure (CSS declarations of each box and its children); hand it to the page with the token.",
      },
    ),
  ),
  pow: Type.Optional(
    Type.Object(
      {
        type: Type.Literal("pow"),
        seed: Type.String({ description: "32 hex characters, keyed to the token." }),
        difficulty: Type.Integer({
          description:
            "The tenant's severe difficulty: an answer at it meets a challenge of any tier (sha256-prefix).",
        }),
        algorithm: Type.Literal("sha256-prefix"),
      },
      {
        description:
          "With pow asked for: the seed a proof_of_work challenge on the attempt that carries this token is sealed with (until its answer clears one challenge), for the page to solve in the background; hand it to the page with the token.",
      },
    ),
  ),
});
