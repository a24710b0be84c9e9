import net from "node:net";

/**
 * Slow HTTP clients for the timeout tests: each resolves `closed` with what the server sent it before
 * the socket closed (its 408 when a timeout cut the request; nothing when the connection was cut bare,
 * as at the end of the shutdown grace period).
 */
export interface SlowClient {
  socket: net.Socket;
  closed: Promise<string>;
}

function track(socket: net.Socket, onClose: () => void = () => undefined): Promise<string> {
  let received = "";
  socket.on("error", () => undefined);
  // Read what the server sends (its 408), so the socket's close is seen.
  socket.on("data", (d: Buffer) => {
    received += d.toString("latin1");
  });
  return new Promise((resolve) =>
    socket.once("close", () => {
      onClose();
      resolve(received);
    }),
  );
}

/** Sends a verify's headers (with `apiKey`), then one byte of its 1,000-byte body every `everyMs`. */
export function trickler(url: string, apiKey: string, everyMs: number): SlowClient {
  const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
  socket.on("connect", () => {
    socket.write(
      `POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
    );
  });
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write("{");
  }, everyMs);
  return { socket, closed: track(socket, () => clearInterval(timer)) };
}

/** Opens a connection and sends only part of a request's headers. */
export function silentHeaders(url: string): SlowClient {
  const socket = net.connect(Number(new URL(url).port), "127.0.0.1", () =>
    socket.write("POST /v1/verify HTTP/1.1\r\nHo"),
  );
  return { socket, closed: track(socket) };
}
