import type { FastifyInstance } from "fastify";
import type { SigningKeyring } from "./signingKeys.js";

/** The published key set for verdictToken receivers (current signer and retired keys still in use). */
export function registerJwks(app: FastifyInstance, keyring: SigningKeyring): void {
  app.get(
    "/.well-known/jwks.json",
    { schema: { summary: "Public keys that sign verdictToken (ES256)", tags: ["tokens"] } },
    async (_request, reply) => {
      reply.header("cache-control", "public, max-age=60");
      return keyring.keySet();
    },
  );
}
