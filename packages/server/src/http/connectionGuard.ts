import type { Server } from "node:http";

/**
 * Sockets a process gives one address, and what it does near its cap. Idle keep-alive connections
 * cost a socket each: about 4,200 of them, kept open with one cheap request each from one address,
 * filled every slot and made verify unreachable for every tenant for a minute. Now:
 * - one address holds at most `perAddress` sockets (a new one over it is closed at once);
 * - once the process holds 90% of `maxConnections`, idle keep-alive connections are closed first
 *   (their clients reconnect when they have a request), so a request in flight keeps its socket and
 *   a new caller finds room.
 */
export function guardConnections(server: Server, limits: { max: number; perAddress: number }): void {
  const byAddress = new Map<string, number>();
  let open = 0;
  const nearCap = Math.floor(limits.max * 0.9);
  server.on("connection", (socket) => {
    const address = socket.remoteAddress ?? "";
    const held = byAddress.get(address) ?? 0;
    if (held >= limits.perAddress) {
      socket.destroy();
      return;
    }
    byAddress.set(address, held + 1);
    open++;
    socket.once("close", () => {
      open--;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left <= 0) byAddress.delete(address);
      else byAddress.set(address, left);
    });
    if (open >= nearCap) server.closeIdleConnections();
  });
}
