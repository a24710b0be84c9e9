// The doors' TLS: a throwaway self-signed certificate for localhost (fixtures/README.md), and the
// HTTPS origin every client is sent to. Clients accept it the way their users do for a test server
// (ignoreHTTPSErrors, acceptInsecureCerts, --ignore-certificate-errors, rejectUnauthorized: false),
// which changes nothing in the ClientHello they send.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures");

/** Certificate and key for https.createServer (TEST ONLY: the key is committed). */
export const LOCALHOST_TLS = Object.freeze({
  cert: fs.readFileSync(path.join(fixtures, "localhost-cert.pem")),
  key: fs.readFileSync(path.join(fixtures, "localhost-key.pem")),
});

/**
 * The host name clients use: a name, not an address, so that every client sends SNI (as it does for
 * a deployed site; an IP address is never sent as SNI, which JA4 records as "i" in place of "d").
 */
export const DOOR_HOST = "localhost";

/** `https://localhost:<port>` for a server listening on 127.0.0.1. */
export const httpsOrigin = (port) => `https://${DOOR_HOST}:${port}`;
