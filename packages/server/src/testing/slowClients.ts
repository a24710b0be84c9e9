import net from "node:net";

/** Slow HTTP clients for the timeout tests: each resolves `closed` with how long its socket lived. */
export interface SlowClient {
  socket: net.Socket;
  closed: Promise<number>;
}

function track(socket: net.Socket, onClose: () => void = () => undefined): Promise<number> {
  const opened = Date.now();
  socket.on("error", () => undefined);
  // Read what the server sends (its 408), so the socket's close is seen.
  socket.resume();
  return new Promise((resolve) =>
    socket.once("close", () => {
      onClose();
      resolve(Date.now() - opened);
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
