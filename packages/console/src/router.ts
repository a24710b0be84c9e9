import { useEffect, useState } from "preact/hooks";

export type Route =
  | { page: "overview" }
  | { page: "events"; session: string }
  | { page: "event"; eventId: string }
  | { page: "outcomes" }
  | { page: "calibration" }
  | { page: "what-if" }
  | { page: "campaigns" }
  | { page: "not-found"; path: string };

export const links = {
  overview: "#/overview",
  events: "#/events",
  session: (session: string) => `#/events?session=${encodeURIComponent(session)}`,
  event: (eventId: string) => `#/events/${encodeURIComponent(eventId)}`,
  outcomes: "#/outcomes",
  calibration: "#/calibration",
  whatIf: "#/what-if",
  campaigns: "#/campaigns",
};

/** "#/events/evt_1" → the event page; "" and "#/" → the overview. */
export function parseHash(hash: string): Route {
  if (!hash.startsWith("#/")) return { page: "overview" };
  const raw = hash.replace(/^#/, "");
  const [pathPart = "", queryPart = ""] = raw.split("?", 2);
  const parts = pathPart.split("/").filter(Boolean);
  const query = new URLSearchParams(queryPart);
  const [first, second] = parts;
  if (!first || first === "overview") return parts.length <= 1 ? { page: "overview" } : notFound(raw);
  if (first === "events") {
    if (second === undefined) return { page: "events", session: query.get("session") ?? "" };
    if (parts.length === 2) return { page: "event", eventId: safeDecode(second) };
    return notFound(raw);
  }
  if (
    parts.length === 1 &&
    (first === "outcomes" || first === "calibration" || first === "what-if" || first === "campaigns")
  ) {
    return { page: first };
  }
  return notFound(raw);
}

function notFound(path: string): Route {
  return { page: "not-found", path };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A name for the route, e.g. "event:evt_1" (on <main data-route>, for tests and styles). */
export function routeName(route: Route): string {
  if (route.page === "event") return `event:${route.eventId}`;
  if (route.page === "events") return route.session ? `events:${route.session}` : "events";
  if (route.page === "not-found") return "not-found";
  return route.page;
}

/** The query parameters of a route's hash ("#/events?emailHash=…" → emailHash). */
export function paramsOf(hash: string): URLSearchParams {
  const at = hash.indexOf("?");
  return new URLSearchParams(at === -1 ? "" : hash.slice(at + 1));
}

/** The same page with `changes` applied to its parameters (undefined or "" removes one). */
export function withParams(hash: string, changes: Record<string, string | undefined>): string {
  const at = hash.indexOf("?");
  const path = (at === -1 ? hash : hash.slice(0, at)) || "#/overview";
  const params = paramsOf(hash);
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === "") params.delete(name);
    else params.set(name, value);
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

export function navigate(hash: string): void {
  if (location.hash !== hash) location.hash = hash;
}

/** The route of the current hash, following hashchange. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onChange = () => {
      // In-page anchors (#main) are not routes: the page stays.
      if (location.hash === "" || location.hash.startsWith("#/")) setRoute(parseHash(location.hash));
    };
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
