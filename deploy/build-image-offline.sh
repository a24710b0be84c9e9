#!/usr/bin/env bash
# Builds and tries the Dockerfile unchanged on a machine that reaches Debian's packages and the npm
# registry but no container registry (docs/deployment.md, "Docker and Compose"):
#   1. makes the two base images the Dockerfile names, node:20-bookworm and node:20-bookworm-slim,
#      from Debian bookworm (mmdebstrap) and this machine's Node 20, laid out as the official images
#      are (/usr/local: node, npm, corepack, the headers node-gyp builds against, user `node`), with
#      this machine's CA certificates and npm's nodedir, as a site's own base image would carry them;
#   2. builds the Dockerfile with buildah (chroot isolation: no daemon, no cgroups needed);
#   3. runs the image as its user: `id`, `warden --help`, no root devDependency in
#      /opt/warden/node_modules that nothing there depends on, the size of /opt/warden, a tenant and
#      a key made with the warden CLI on the default SQLite store, then `warden serve` on a free port
#      (WARDEN_IMAGE_PORT, default 18089): /healthz, the server process's uid, a verify with that key, the image's HEALTHCHECK command, then SIGTERM to
#      that process and its exit code. A failed build prints the end of its log.
# Needs root and Debian's buildah and mmdebstrap (apt-get install -y buildah mmdebstrap).
# Usage: deploy/build-image-offline.sh [image name, default localhost/warden:offline]
set -euo pipefail
cd "$(dirname "$0")/.."
image=${1:-localhost/warden:offline}
port=${WARDEN_IMAGE_PORT:-18089}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export BUILDAH_ISOLATION=chroot

base() { # base <name> <extra Debian packages>; kept when made before (FRESH_BASE=1 makes it again)
  if [ "${FRESH_BASE:-0}" != 1 ] && buildah inspect --type image "$1" >/dev/null 2>&1; then
    echo "base image $1: kept ($(buildah images --format '{{.Size}}' "$1"))"
    return
  fi
  mmdebstrap --quiet --variant=minbase --include="ca-certificates${2:+,$2}" bookworm "$work/rootfs.tar" \
    http://deb.debian.org/debian
  local ctr mnt
  ctr=$(buildah from scratch)
  mnt=$(buildah mount "$ctr")
  tar -xf "$work/rootfs.tar" -C "$mnt"
  rm "$work/rootfs.tar"
  local node prefix
  node=$(command -v node)
  prefix=$(dirname "$(dirname "$(readlink -f "$node")")")
  mkdir -p "$mnt/usr/local/bin" "$mnt/usr/local/include" "$mnt/usr/local/lib/node_modules"
  cp "$(readlink -f "$node")" "$mnt/usr/local/bin/node"
  cp -a "$prefix/include/node" "$mnt/usr/local/include/node"
  cp -a "$prefix/lib/node_modules/npm" "$prefix/lib/node_modules/corepack" "$mnt/usr/local/lib/node_modules/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$mnt/usr/local/share/ca-certificates/"
    chroot "$mnt" update-ca-certificates >/dev/null
  fi
  chroot "$mnt" /bin/sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
  buildah unmount "$ctr" >/dev/null
  buildah config --cmd node \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env npm_config_nodedir=/usr/local \
    --env npm_config_cafile=/etc/ssl/certs/ca-certificates.crt "$ctr"
  buildah commit --quiet --rm "$ctr" "$1" >/dev/null
  echo "base image $1: $(buildah images --format '{{.Size}}' "$1")"
}

base docker.io/library/node:20-bookworm-slim ""
base docker.io/library/node:20-bookworm "python3,make,g++"

# Docker's image format: OCI's has no HEALTHCHECK.
started=$SECONDS
if ! buildah bud --format docker --pull=never --layers -t "$image" . >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log"
  echo "build: failed"
  exit 1
fi
echo "build: $((SECONDS - started)) s; image $image: $(buildah images --format '{{.Size}}' "$image")"
echo "user: $(buildah inspect --format '{{.OCIv1.Config.User}}' "$image"), entrypoint: $(buildah inspect --format '{{.OCIv1.Config.Entrypoint}} {{.OCIv1.Config.Cmd}}' "$image")"

ctr=$(buildah from "$image")
as_node() { buildah run --user node --env PORT="$port" --env HOST=127.0.0.1 "$ctr" -- "$@"; }
echo "id: $(as_node id)"
as_node warden --help >/dev/null && echo "warden --help: exit 0"
# No development dependency (the root's devDependencies) that no package in the image depends on
# (yaml is one @fastify/swagger loads), and the size of what the image adds to its base.
mnt=$(buildah mount "$ctr")
present=$(node -e '
  const fs = require("fs"), path = require("path");
  const modules = path.join(process.argv[1], "opt/warden/node_modules");
  const needed = new Set();
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && !e.isSymbolicLink()) walk(p);
      else if (e.name === "package.json") {
        try { Object.keys(JSON.parse(fs.readFileSync(p, "utf8")).dependencies ?? {}).forEach((d) => needed.add(d)); } catch {}
      }
    }
  };
  walk(modules);
  const dev = Object.keys(require("./package.json").devDependencies ?? {});
  console.log(dev.filter((d) => fs.existsSync(path.join(modules, d)) && !needed.has(d)).join(" "));
' "$mnt")
echo "/opt/warden: $(du -sh "$mnt/opt/warden" | cut -f1) (node_modules $(du -sh "$mnt/opt/warden/node_modules" | cut -f1))"
buildah unmount "$ctr" >/dev/null
echo "devDependencies in /opt/warden/node_modules that nothing there needs: ${present:-none}"
[ -z "$present" ] || exit 1
# A tenant and a key made with the CLI on the image's default store (SQLite under /var/lib/warden).
as_node warden tenant create smoke >/dev/null
key=$(as_node warden key create --tenant smoke --scopes verify:write --json |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).apiKey))')
echo "tenant smoke and a key: made with the warden CLI"

log="$work/serve.log"
as_node warden serve >"$log" 2>&1 &
served=$!
started=$SECONDS
for _ in $(seq 1 60); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 1; done
echo "healthz: $(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz") after $((SECONDS - started)) s"
# The server itself, a descendant of buildah's process (chroot isolation: the host sees it).
descendants() { local p; for p in $(pgrep -P "$1"); do echo "$p"; descendants "$p"; done; }
server=""
for p in $(descendants "$served"); do
  if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q '^node /usr/local/bin/warden serve'; then server=$p; fi
done
if [ -z "$server" ]; then
  echo "server process: not found"; tail -n 20 "$log"; kill -TERM "$served"; exit 1
fi
echo "server process $server: uid $(awk '/^Uid:/ {print $2}' "/proc/$server/status")"
echo "verify: $(curl -sS "http://127.0.0.1:$port/v1/verify" -H "Authorization: Bearer $key" \
  -H 'Content-Type: application/json' -d '{"action":"signup","subject":{"userAgent":"curl/8.5.0"}}' |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);console.log(v.decision,v.actorType,"degraded:",v.degraded,"token:",String(v.verdictToken).split(".").length,"parts")})')"
# The HEALTHCHECK's command as the image records it: ["CMD", "node", "-e", script].
script=$(buildah inspect --type image "$image" | node -e '
  let s = "";
  process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const test = JSON.parse(s).Docker?.config?.Healthcheck?.Test ?? [];
    if (test.slice(0, 3).join(" ") !== "CMD node -e") process.exit(1);
    console.log(test[3]);
  });')
echo "HEALTHCHECK: $script"
if as_node node -e "$script"; then
  echo "HEALTHCHECK command: exit 0"
else
  echo "HEALTHCHECK command: failed"
fi
kill -TERM "$server"
if wait "$served"; then echo "SIGTERM: exit 0"; else echo "SIGTERM: exit $?"; fi
buildah rm "$ctr" >/dev/null
