import { exampleSuite } from "../../packages/server/src/testing/exampleSuite.js";

exampleSuite("express", { server: ["src/server.ts"], pages: ["public/index.html"] });
