// The server adds `warmUp()` to its Fastify app in http/warmUp.ts, a module its built app.d.ts does not
// import: the benches that warm an app up see the addition through this file.
import "@warden/server/dist/http/warmUp.js";
