import { Fragment } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiError, api, whenSessionRequired } from "./api.js";
import { Nav } from "./components/Nav.js";
import { mayResolve } from "./components/ResolveQuarantined.js";
import { type Filters, filterParams, filtersFromParams } from "./filters.js";
import { CalibrationPage } from "./pages/CalibrationPage.js";
import { CampaignsPage } from "./pages/CampaignsPage.js";
import { EventPage } from "./pages/EventPage.js";
import { EventsPage } from "./pages/EventsPage.js";
import { NotFoundPage } from "./pages/NotFoundPage.js";
import { OutcomesPage } from "./pages/OutcomesPage.js";
import { OverviewPage } from "./pages/OverviewPage.js";
import { SignInPage } from "./pages/SignInPage.js";
import { WhatIfPage } from "./pages/WhatIfPage.js";
import { navigate, paramsOf, type Route, routeName, useRoute, withParams } from "./router.js";
import type { Session } from "./types.js";

/** Who is signed in: undefined while the console asks the server, null when nobody is. */
type SessionState = Session | null | undefined;

export function App() {
  const [session, setSession] = useState<SessionState>(undefined);
  const [notice, setNotice] = useState("");
  const route = useRoute();
  // Each page owns its filters, in its own URL: nothing carries over from one page to the next, and
  // a page's address shows (and shares) what it shows. Resolved once per address.
  const hash = location.hash;
  const params = useMemo(() => paramsOf(hash), [hash]);
  const filters = useMemo(() => filtersFromParams(params), [params]);
  const setParams = (changes: Record<string, string | undefined>) => navigate(withParams(hash, changes));
  const setFilters = (f: Filters) => setParams(filterParams(f));

  useEffect(() => {
    whenSessionRequired((message) => {
      setSession(null);
      setNotice(message || "Your session has ended. Sign in again.");
    });
    api.session().then(setSession, (err: unknown) => {
      setSession(null);
      if (!(err instanceof ApiError && err.status === 401)) setNotice((err as Error).message);
    });
  }, []);

  if (session === undefined) {
    return (
      <main id="main" class="page">
        <p class="status" role="status" aria-live="polite">
          Loading…
        </p>
      </main>
    );
  }

  if (session === null) {
    return (
      <SignInPage
        notice={notice}
        onSignedIn={(s) => {
          setNotice("");
          setSession(s);
        }}
      />
    );
  }

  const signOut = async () => {
    try {
      await api.signOut();
      setNotice("Signed out.");
    } catch (err) {
      setNotice(`Signed out here; the server said: ${(err as Error).message}`);
    }
    setSession(null);
  };

  return (
    <>
      <Nav route={route} session={session} onSignOut={signOut} />
      <main
        id="main"
        class="page"
        tabIndex={-1}
        key={`${session.tenantId}:${session.keyId}`}
        data-route={routeName(route)}
      >
        {/* A new page (or another event) mounts afresh: nothing of the last one's state or data shows. */}
        <Fragment key={route.page === "event" ? `event:${route.eventId}` : route.page}>
          {page(route, session, filters, setFilters, params, setParams)}
        </Fragment>
      </main>
    </>
  );
}

function page(
  route: Route,
  session: Session,
  filters: Filters,
  setFilters: (f: Filters) => void,
  params: URLSearchParams,
  setParams: (changes: Record<string, string | undefined>) => void,
) {
  const shared = { filters, onFilters: setFilters };
  switch (route.page) {
    case "overview":
      return <OverviewPage {...shared} />;
    case "events":
      return <EventsPage {...shared} params={params} onParams={setParams} />;
    case "event":
      return <EventPage eventId={route.eventId} canResolve={mayResolve(session)} />;
    case "outcomes":
      return <OutcomesPage {...shared} canResolve={mayResolve(session)} />;
    case "calibration":
      return <CalibrationPage {...shared} />;
    case "what-if":
      return <WhatIfPage {...shared} tenantId={session.tenantId} />;
    case "campaigns":
      return <CampaignsPage {...shared} canDeny={session.scopes.includes("policy:write")} />;
    case "not-found":
      return <NotFoundPage path={route.path} />;
  }
}
