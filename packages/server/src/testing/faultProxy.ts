import net from "node:net";

export type FaultMode = "pass" | "cut" | "stall" | "slow";

/**
 * What happens to the first connection whose client sends a chunk that contains a marker, from that
 * chunk on:
 * `late replies` delays everything the server sends on it by `delayMs` (the request arrives, its answer
 * does not in time); `held requests` holds that chunk and all the client sends after it until the
 * mode is set again (the request never arrives in time).
 */
export type MarkedFault = "late replies" | "held requests";

/**
 * A TCP proxy in front of a server (PostgreSQL, Redis) that a test can cut, stall, slow down and
 * reset. `cut` refuses new connections and closes open ones; `stall` holds every byte until the mode
 * changes; `slow` delays each chunk by `delayMs`; `reset()` aborts every open connection with a RST
 * once. Loopback only.
 */
export class FaultProxy {
  private server: net.Server;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  private held: (() => void)[] = [];
  mode: FaultMode = "pass";
  delayMs = 200;
  port = 0;
  /** Connections the proxy has accepted so far (each one a server process started, for PostgreSQL). */
  accepted = 0;
  private marked: { marker: Buffer; fault: MarkedFault; met: boolean } | undefined;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.server = net.createServer((client) => this.accept(client));
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  /** Applies `fault` to the first connection whose client sends `marker` (latin1), until `set`. */
  on(marker: string, fault: MarkedFault): void {
    this.marked = { marker: Buffer.from(marker, "latin1"), fault, met: false };
  }

  set(mode: FaultMode): void {
    this.mode = mode;
    this.marked = undefined;
    if (mode === "cut") for (const p of this.pairs) this.close(p);
    if (mode === "pass" || mode === "cut") {
      const held = this.held;
      this.held = [];
      for (const release of held) release();
    }
  }

  /** Aborts every open connection with a TCP reset; new connections pass. */
  reset(): void {
    for (const p of this.pairs) {
      p.client.resetAndDestroy();
      p.upstream.resetAndDestroy();
      this.pairs.delete(p);
    }
  }

  async stop(): Promise<void> {
    this.set("cut");
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    if (this.mode === "cut") {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.targetPort, this.targetHost);
    const pair = { client, upstream };
    this.pairs.add(pair);
    /** The marked fault this connection met, if any (on). */
    let met: MarkedFault | undefined;
    const forward = (from: net.Socket, to: net.Socket, fromClient: boolean) =>
      from.on("data", (chunk: Buffer) => {
        const send = () => {
          if (!to.destroyed) to.write(chunk);
        };
        const marked = this.marked;
        if (fromClient && marked && !marked.met && chunk.includes(marked.marker)) {
          marked.met = true;
          met = marked.fault;
        }
        if (!marked) met = undefined;
        if (this.mode === "stall" || (fromClient && met === "held requests")) this.held.push(send);
        else if (this.mode === "slow" || (!fromClient && met === "late replies"))
          setTimeout(send, this.delayMs);
        else send();
      });
    forward(client, upstream, true);
    forward(upstream, client, false);
    const end = () => this.close(pair);
    for (const s of [client, upstream]) {
      s.on("error", end);
      s.on("close", end);
    }
  }

  private close(pair: { client: net.Socket; upstream: net.Socket }): void {
    this.pairs.delete(pair);
    pair.client.destroy();
    pair.upstream.destroy();
  }
}
