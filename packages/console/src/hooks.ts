import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, type Query, withQuery } from "./api.js";

export interface Loaded<T> {
  /** The last answer; kept while a new one loads, so the page does not flash empty. */
  data: T | null;
  error: ApiError | null;
  loading: boolean;
  reload(): void;
}

/** GET `path` with `query` whenever either changes (null path: nothing to load). */
export function useApi<T>(path: string | null, query: Query = {}): Loaded<T> {
  const key = path === null ? null : withQuery(path, query);
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; loading: boolean }>({
    data: null,
    error: null,
    loading: path !== null,
  });
  const [generation, setGeneration] = useState(0);
  const latest = useRef({ path, query });
  latest.current = { path, query };

  // key stands for path and query; generation forces a reload.
  useEffect(() => {
    const { path: p, query: q } = latest.current;
    if (p === null) {
      setState({ data: null, error: null, loading: false });
      return;
    }
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true, error: null }));
    api.get<T>(p, q, controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, error: null, loading: false });
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        const error =
          err instanceof ApiError
            ? err
            : new ApiError(0, "client_error", String((err as Error)?.message ?? err));
        setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
    return () => controller.abort();
  }, [key, generation]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}

/** `value`, once it has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

export interface Paged<T> {
  items: T[];
  nextCursor: string | null;
  /** Whether a first page has arrived for the current query. */
  loaded: boolean;
  loading: boolean;
  error: ApiError | null;
  loadMore(): void;
}

/** A cursor-paginated list (items, nextCursor): the first page per query, then more on demand. */
export function usePaged<T>(path: string | null, query: Query = {}): Paged<T> {
  const key = path === null ? null : withQuery(path, query);
  const [state, setState] = useState<Omit<Paged<T>, "loadMore">>({
    items: [],
    nextCursor: null,
    loaded: false,
    loading: path !== null,
    error: null,
  });
  const latest = useRef({ path, query, key });
  latest.current = { path, query, key };
  const inFlight = useRef<AbortController | null>(null);

  const fetchPage = useCallback((cursor: string | null) => {
    const { path: p, query: q, key: k } = latest.current;
    if (p === null) return;
    inFlight.current?.abort();
    const controller = new AbortController();
    inFlight.current = controller;
    setState((s) => ({ ...s, loading: true, error: null }));
    api.get<{ items: T[]; nextCursor: string | null }>(p, { ...q, cursor }, controller.signal).then(
      (page) => {
        if (controller.signal.aborted || latest.current.key !== k) return;
        setState((s) => ({
          items: cursor ? [...s.items, ...page.items] : page.items,
          nextCursor: page.nextCursor,
          loaded: true,
          loading: false,
          error: null,
        }));
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        const error =
          err instanceof ApiError
            ? err
            : new ApiError(0, "client_error", String((err as Error)?.message ?? err));
        setState((s) => ({ ...s, loading: false, error }));
      },
    );
  }, []);

  // key stands for path and query.
  useEffect(() => {
    setState({ items: [], nextCursor: null, loaded: false, loading: path !== null, error: null });
    fetchPage(null);
    return () => inFlight.current?.abort();
  }, [key, fetchPage]);

  const loadMore = useCallback(() => {
    if (state.nextCursor) fetchPage(state.nextCursor);
  }, [state.nextCursor, fetchPage]);

  return { ...state, loadMore };
}
