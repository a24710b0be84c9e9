/**
 * The one Trusted Types policy of this package, `warden`, and the workers it lets the page start. A
 * page served with `require-trusted-types-for 'script'` refuses `new Worker(string)`: the script URL
 * must be a TrustedScriptURL made by a policy its `trusted-types` directive names (docs/integration.md,
 * "Content Security Policy and Trusted Types"). Where Trusted Types do not exist, the URL is used as is.
 */
export const TRUSTED_TYPES_POLICY = "warden";

interface ScriptUrlPolicy {
  createScriptURL(url: string): unknown;
}
interface TrustedTypesFactory {
  createPolicy(name: string, rules: { createScriptURL(url: string): string }): ScriptUrlPolicy;
}

/** undefined: not tried yet; null: no Trusted Types here, or the page's CSP does not allow `warden`. */
let policy: ScriptUrlPolicy | null | undefined;

/**
 * Only http(s) scripts: a worker from a `data:`, `blob:` or `javascript:` URL is exactly what Trusted
 * Types exist to stop, so the policy never vouches for one (worker-src then limits the origins).
 */
function httpScriptUrl(url: string): string {
  const parsed = new URL(url, document.baseURI);
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new TypeError(`warden: refusing a worker script from ${parsed.protocol} (http or https only)`);
  }
  return parsed.href;
}

function wardenPolicy(): ScriptUrlPolicy | null {
  if (policy !== undefined) return policy;
  const factory = (globalThis as { trustedTypes?: TrustedTypesFactory }).trustedTypes;
  try {
    policy = factory ? factory.createPolicy(TRUSTED_TYPES_POLICY, { createScriptURL: httpScriptUrl }) : null;
  } catch {
    // The CSP's trusted-types directive does not name `warden` (or names it once and another copy of
    // this package made it first): workers then start only where Trusted Types are not enforced.
    policy = null;
  }
  return policy;
}

/** Starts a classic worker from `url`, through the `warden` policy where the browser has Trusted Types. */
export function startWorker(url: string | URL, name: string): Worker {
  const trusted = wardenPolicy()?.createScriptURL(String(url));
  // A TrustedScriptURL is what the Worker constructor takes under Trusted Types; TypeScript's DOM
  // library types it as a string or URL only.
  return new Worker((trusted ?? url) as string | URL, { name });
}
