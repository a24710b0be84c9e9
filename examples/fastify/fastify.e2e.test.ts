import { exampleSuite } from "../../packages/server/src/testing/exampleSuite.js";

exampleSuite("fastify", { server: ["src/server.ts"], pages: ["public/index.html"] });
