/**
 * Where Warden's Redis is, as WARDEN_REDIS_URL names it: one server (`redis://`, `rediss://`), a
 * Redis Cluster by some of its nodes (`redis+cluster://host:port,host:port`), or a master found
 * through Sentinels (`redis+sentinel://host:26379,host:26379/<master name>[/<db>]`). The `rediss`
 * forms connect with TLS. Parsed once at start-up (config.ts); a malformed URL is a RedisUrlError
 * whose message shows the URL with its passwords hidden.
 */
export interface RedisAddress {
  host: string;
  port: number;
}

interface Credentials {
  username?: string;
  password?: string;
}

export type RedisTarget =
  | { kind: "server"; url: string }
  | ({ kind: "cluster"; nodes: RedisAddress[]; tls: boolean } & Credentials)
  | ({
      kind: "sentinel";
      sentinels: RedisAddress[];
      masterName: string;
      db: number;
      tls: boolean;
      /** Of the Sentinels themselves (`?sentinelPassword=`); the userinfo is the master's. */
      sentinelPassword?: string;
    } & Credentials);

export type RedisKind = RedisTarget["kind"];

export class RedisUrlError extends Error {
  override name = "RedisUrlError";
}

const CLUSTER_PORT = 6379;
const SENTINEL_PORT = 26379;
const SCHEMES =
  "redis://, rediss:// (one server), redis+cluster://, rediss+cluster:// (a Redis Cluster) or redis+sentinel://, rediss+sentinel:// (Sentinel)";

/**
 * The URL with its credentials replaced by `***`, for messages and logs: everything before the last
 * `@` of the authority, whatever its shape (`user:pass@`, `pass@`, a password holding `@` or `:`),
 * keeping a user name only when it is plainly `user:`; and the Sentinels' password.
 */
export function redactRedisUrl(raw: string): string {
  const scheme = /^[a-z+]*:\/\//i.exec(raw)?.[0] ?? "";
  const rest = raw.slice(scheme.length);
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf("@");
  const shown =
    at < 0
      ? authority
      : `${/^[^:@]*:/.test(authority.slice(0, at)) ? authority.slice(0, authority.indexOf(":") + 1) : ""}***${authority.slice(at)}`;
  return `${scheme}${shown}${end < 0 ? "" : rest.slice(end)}`.replace(
    /([?&]sentinelPassword=)[^&#]*/,
    "$1***",
  );
}

export function parseRedisUrl(raw: string): RedisTarget {
  const shown = redactRedisUrl(raw);
  const scheme = /^(rediss?)(?:\+(cluster|sentinel))?:\/\//.exec(raw);
  if (!scheme) throw new RedisUrlError(`must start with ${SCHEMES} (got "${shown}")`);
  const tls = scheme[1] === "rediss";
  const kind = scheme[2] as "cluster" | "sentinel" | undefined;
  if (kind === undefined) {
    if (/^[^/?]*,/.test(raw.slice(scheme[0].length)))
      throw new RedisUrlError(
        `names several hosts: use ${scheme[1]}+cluster:// for a Redis Cluster or ${scheme[1]}+sentinel:// for Sentinels (got "${shown}")`,
      );
    try {
      new URL(raw);
    } catch {
      throw new RedisUrlError(`is not a URL (got "${shown}")`);
    }
    return { kind: "server", url: raw };
  }
  const rest = raw.slice(scheme[0].length);
  const queryAt = rest.indexOf("?");
  const beforeQuery = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const query = new URLSearchParams(queryAt < 0 ? "" : rest.slice(queryAt + 1));
  const pathAt = beforeQuery.indexOf("/");
  const authority = pathAt < 0 ? beforeQuery : beforeQuery.slice(0, pathAt);
  const path = pathAt < 0 ? "" : beforeQuery.slice(pathAt);
  const at = authority.lastIndexOf("@");
  const credentials = at < 0 ? {} : parseCredentials(authority.slice(0, at), shown);
  const hosts = (at < 0 ? authority : authority.slice(at + 1))
    .split(",")
    .map((h) => parseAddress(h, kind === "cluster" ? CLUSTER_PORT : SENTINEL_PORT, shown));

  if (kind === "cluster") {
    if (path !== "" && path !== "/")
      throw new RedisUrlError(`a Redis Cluster has only database 0: remove "${path}" (got "${shown}")`);
    for (const name of query.keys()) throw new RedisUrlError(`unknown parameter "${name}" (got "${shown}")`);
    return { kind, nodes: hosts, tls, ...credentials };
  }
  const [, masterName = "", db = "0", ...extra] = path.split("/").map(decode(shown));
  if (masterName === "")
    throw new RedisUrlError(
      `names no master: add the name Sentinel monitors it by, as in ${scheme[1]}+sentinel://host:26379/mymaster (got "${shown}")`,
    );
  if (!/^\d{1,5}$/.test(db) || extra.length > 0)
    throw new RedisUrlError(`ends in /<master name>[/<database number>] (got "${shown}")`);
  let sentinelPassword: string | undefined;
  for (const [name, value] of query) {
    if (name !== "sentinelPassword")
      throw new RedisUrlError(
        `unknown parameter "${name}"; the one known is sentinelPassword (got "${shown}")`,
      );
    sentinelPassword = value;
  }
  return {
    kind,
    sentinels: hosts,
    masterName,
    db: Number(db),
    tls,
    ...credentials,
    ...(sentinelPassword === undefined ? {} : { sentinelPassword }),
  };
}

function decode(shown: string) {
  return (part: string): string => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw new RedisUrlError(`has a malformed %-escape (got "${shown}")`);
    }
  };
}

function parseCredentials(userinfo: string, shown: string): Credentials {
  const colon = userinfo.indexOf(":");
  const [username, password] = (
    colon < 0 ? ["", userinfo] : [userinfo.slice(0, colon), userinfo.slice(colon + 1)]
  ).map(decode(shown));
  return {
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
  };
}

function parseAddress(text: string, defaultPort: number, shown: string): RedisAddress {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(text);
  const port = m?.[2] === undefined ? defaultPort : Number(m[2]);
  if (!m?.[1] || port < 1 || port > 65_535)
    throw new RedisUrlError(`"${text}" is not a host[:port] (got "${shown}")`);
  return { host: m[1].replace(/^\[|\]$/g, ""), port };
}

/** host:port as Redis and its tools write it (IPv6 in brackets). */
export function formatAddress(a: RedisAddress): string {
  return a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}
