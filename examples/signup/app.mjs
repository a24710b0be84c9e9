// The example signup app: one form, gated by Warden. Nothing about a pending signup is kept on the
// server: the gate's signed ticket carries the form between the challenge and the re-submission.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { WardenClient, wardenChallengeRoutes, wardenGate } from "@warden/client";
import express from "express";

const here = path.dirname(fileURLToPath(import.meta.url));
const browserDist = path.dirname(fileURLToPath(import.meta.resolve("@warden/browser")));

/** A form field as text: strings as they are, anything else (arrays, objects, numbers) as empty. */
const textOf = (value) => (typeof value === "string" ? value : "");

/**
 * @param {{ wardenUrl: string, apiKey: string, tenantId: string, ticketSecret: string,
 *           tokenIssuer?: string, tokenAudience?: string, trustedProxies?: string[], ja4Header?: string,
 *           verifyTimeoutMs?: number }} settings
 *   trustedProxies: the addresses (CIDR) of the load balancers or CDN in front of the app, trusted to
 *   write X-Forwarded-For (and ja4Header).
 *   ja4Header: the name of a header in which that trusted proxy writes the client's JA4 TLS fingerprint
 *   (CloudFront's `CloudFront-Viewer-JA4-Fingerprint`, a Cloudflare Transform Rule's header for its JA4
 *   field, an nginx JA4 module's variable set as a header...). The gate reads it only when the
 *   request came from one of trustedProxies, and send it to Warden as subject.tls.ja4;
 *   unset (the default), no JA4 is read.
 */
export function createSignupApp(settings) {
  // The gate checks every allow's receipt (verdictToken) against the tenant, issuer and audience.
  const client = new WardenClient({
    baseUrl: settings.wardenUrl,
    apiKey: settings.apiKey,
    tenantId: settings.tenantId,
    ...(settings.tokenIssuer ? { tokenIssuer: settings.tokenIssuer } : {}),
    ...(settings.tokenAudience ? { tokenAudience: settings.tokenAudience } : {}),
    verifyTimeoutMs: settings.verifyTimeoutMs ?? 1000,
  });
  /** The accounts created, with the eventId of the verify that allowed each (the feedback join key). */
  const accounts = new Map();
  const app = express();
  app.disable("x-powered-by");
  app.use((_req, res, next) => {
    res.set(
      "content-security-policy",
      "default-src 'self'; script-src 'self'; worker-src 'self'; style-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'",
    );
    next();
  });
  app.use(express.static(path.join(here, "public")));
  app.use("/warden", express.static(browserDist));
  app.use(express.json({ limit: "16kb" }));
  app.use(
    wardenChallengeRoutes({
      client,
      ticketSecret: settings.ticketSecret,
      ...(settings.trustedProxies ? { trustedProxies: settings.trustedProxies } : {}),
    }),
  );
  app.post(
    "/signup",
    wardenGate({
      client,
      action: "signup",
      ticketSecret: settings.ticketSecret,
      // The gate refuses an email that is not a string (400 invalid_email): the handler below reads the
      // same string the gate scored, never a String() of an array.
      email: (body) => body.email,
      pending: (body) => ({ email: textOf(body.email), name: textOf(body.name) }),
      ...(settings.trustedProxies ? { trustedProxies: settings.trustedProxies } : {}),
      ...(settings.ja4Header ? { ja4Header: settings.ja4Header } : {}),
    }),
    (req, res) => {
      // The gate checked the receipt (signature, issuer, audience, tenant, session, action). The form:
      // after a challenge, the one signed into the ticket; otherwise the body the gate verified.
      const { verdict, form } = req.warden;
      const email = textOf(form.email).trim().toLowerCase();
      if (!email.includes("@")) {
        res
          .status(400)
          .json({ error: "bad_request", code: "invalid_email", message: "Enter an email address." });
        return;
      }
      accounts.set(email, {
        email,
        name: textOf(form.name),
        eventId: verdict.eventId,
        createdAt: new Date().toISOString(),
      });
      res.status(201).json({
        created: email,
        eventId: verdict.eventId,
        challengeCleared: verdict.challengeCleared === true,
      });
    },
  );
  return { app, accounts };
}
