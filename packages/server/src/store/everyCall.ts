import type { Store } from "./interfaces.js";

/** Wraps one store call, given its name (`events.record`, `ping`). */
export type CallWrapper = <A extends unknown[], R>(
  call: string,
  fn: (...args: A) => Promise<R>,
) => (...args: A) => Promise<R>;

type Area = Exclude<keyof Store, "patient" | "ping" | "warmUp" | "close" | "counterFallbacks">;

/** Every area of the Store interface: a new area that is missing here does not compile. */
const AREAS: Record<Area, true> = {
  tenants: true,
  apiKeys: true,
  signingKeys: true,
  counters: true,
  events: true,
  idempotency: true,
  feedback: true,
  challenges: true,
  agents: true,
  policies: true,
  insights: true,
  consoleSessions: true,
  removal: true,
};

/**
 * The store with every method of every area (the patient calls too), and `ping`, passed through `wrap` once, here: not a
 * per-call proxy, since this is on verify's hot path. `warmUp` and `close` pass through unwrapped.
 */
export function wrapEveryCall(store: Store, wrap: CallWrapper): Store {
  const wrapArea = (area: string, target: object): object => {
    const wrapped: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(target)) {
      wrapped[name] =
        typeof value === "function"
          ? wrap(`${area}.${name}`, (value as (...a: unknown[]) => Promise<unknown>).bind(target))
          : value;
    }
    return wrapped;
  };
  const areas = Object.fromEntries(
    (Object.keys(AREAS) as Area[]).map((area) => [area, wrapArea(area, store[area])]),
  ) as Pick<Store, Area>;
  return {
    ...areas,
    // Named apart from verify's own (`patient.apiKeys.findByHash`): their timings are not verify's.
    patient: {
      apiKeys: wrapArea("patient.apiKeys", store.patient.apiKeys) as Store["patient"]["apiKeys"],
      counters: wrapArea("patient.counters", store.patient.counters) as Store["patient"]["counters"],
      idempotency: wrapArea(
        "patient.idempotency",
        store.patient.idempotency,
      ) as Store["patient"]["idempotency"],
    },
    ping: wrap("ping", () => store.ping()),
    warmUp: () => store.warmUp(),
    close: () => store.close(),
    ...(store.counterFallbacks === undefined ? {} : { counterFallbacks: store.counterFallbacks }),
  };
}
