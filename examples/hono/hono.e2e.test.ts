import { exampleSuite } from "../../packages/server/src/testing/exampleSuite.js";

exampleSuite("hono", { server: ["src/server.ts"], pages: ["public/index.html"] });
