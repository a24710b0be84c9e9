import type { DenyRuleAnswer, ResolutionAnswer, RuleList, Session } from "./types.js";

/** Query parameters: undefined, null and "" are left out. */
export type Query = Record<string, string | number | undefined | null>;

/** An answer in the Error schema ({ error, message, code }), or a failure to reach the server. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

let onSessionRequired: (message: string) => void = () => {};

/** Who hears that the session is gone (a 401 console_session_required): the app, to show sign-in. */
export function whenSessionRequired(handler: (message: string) => void): void {
  onSessionRequired = handler;
}

/**
 * Where the API lives: the parent of the console's folder (/console/ → /), so a proxy that mounts
 * Warden under a prefix (/warden/console/) keeps working. Paths below are written without a leading slash.
 */
function apiRoot(): string {
  const root = new URL("../", new URL(".", location.href)).pathname;
  return root.endsWith("/") ? root : `${root}/`;
}

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue;
    params.set(name, String(value));
  }
  const text = params.toString();
  const url = `${apiRoot()}${path.replace(/^\//, "")}`;
  return text ? `${url}?${text}` : url;
}

/** The same query as CSV: the API answers a download with the same filters (from the first page). */
export function csvUrl(path: string, query: Query = {}): string {
  return withQuery(path, { ...query, format: "csv", cursor: undefined });
}

async function errorOf(res: Response): Promise<ApiError> {
  let code = "http_error";
  let message = `The server answered ${res.status} ${res.statusText}`.trim();
  try {
    const body = (await res.json()) as { code?: unknown; message?: unknown };
    if (typeof body.code === "string") code = body.code;
    if (typeof body.message === "string" && body.message) message = body.message;
  } catch {
    // Not the Error schema: keep the status line.
  }
  return new ApiError(res.status, code, message);
}

interface RequestOptions {
  method?: "GET" | "POST" | "DELETE";
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
  /** Sign-in and the session probe handle their own 401s. */
  quiet401?: boolean;
}

/** One call to the API with the session cookie; JSON in and out; an ApiError otherwise. */
export async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? "GET";
  const headers: Record<string, string> = { accept: "application/json" };
  if (method !== "GET") headers["x-warden-console"] = "1";
  if (options.body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(withQuery(path, options.query), {
      method,
      headers,
      credentials: "same-origin",
      cache: "no-store",
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, "network_error", "Warden could not be reached. Check the connection and retry.");
  }
  if (!res.ok) {
    const error = await errorOf(res);
    if (error.status === 401 && error.code === "console_session_required" && !options.quiet401) {
      onSessionRequired(error.message);
    }
    throw error;
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) =>
    request<T>(path, { query: query ?? {}, ...(signal ? { signal } : {}) }),

  /** The key travels once, in this body; nothing in the browser keeps it. */
  signIn: (apiKey: string) =>
    request<Session>("/console/session", { method: "POST", body: { apiKey }, quiet401: true }),

  session: () => request<Session>("/console/session", { quiet401: true }),

  signOut: () => request<void>("/console/session", { method: "DELETE", quiet401: true }),

  /** Accept or reject a quarantined observation (needs ledger:write; sent with the session cookie). */
  resolve: (feedbackId: string, resolution: "accept" | "reject", note: string) =>
    request<ResolutionAnswer>(`/v1/feedback/${encodeURIComponent(feedbackId)}/resolution`, {
      method: "POST",
      body: note.trim() ? { resolution, note: note.trim() } : { resolution },
    }),

  /** Append a value to the tenant policy's deny list (needs policy:write; sent with the session cookie). */
  deny: (list: RuleList, value: string, basedOn: string) =>
    request<DenyRuleAnswer>("/v1/policy/deny", { method: "POST", body: { list, value, basedOn } }),
};
