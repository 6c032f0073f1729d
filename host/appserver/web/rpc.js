// The protocol over one WebSocket: requests matched to responses by id, notifications and the
// server's own requests handed on, and a new socket after a lost one (docs/app-server.md).
// The token goes as the subprotocol `agent-host.token.<token>` beside `agent-host.v1`.

export const MAX_MESSAGE = 8 * 1024 * 1024;

export class RpcError extends Error {
  constructor(error) {
    super(typeof error?.message === "string" ? error.message : "the server's error could not be read");
    this.code = error?.data?.code ?? null;
  }
}

export class Rpc {
  // handlers: {notify(method, params), ask(id, method, params), opened(first), lost(), bad(line),
  // refused(): an attempt that never opened (a wrong token, or no server); retried until stop()}
  constructor(url, token, handlers) {
    this.url = url;
    this.token = token;
    this.handlers = handlers;
    this.nextId = 1;
    this.pending = new Map();
    this.socket = null;
    this.everOpened = false;
    this.retry = 0;
    this.stopped = false;
  }

  start() {
    const socket = new WebSocket(this.url, ["agent-host.v1", "agent-host.token." + this.token]);
    this.socket = socket;
    let opened = false;
    socket.onopen = () => {
      opened = true;
      this.retry = 0;
      const first = !this.everOpened;
      this.everOpened = true;
      this.handlers.opened(first);
    };
    socket.onmessage = (event) => this.read(event.data);
    socket.onclose = () => {
      if (socket !== this.socket) return;
      this.failPending();
      if (this.stopped) return;
      if (opened) this.handlers.lost();
      else this.handlers.refused();
      this.retry = Math.min(this.retry + 1, 5);
      setTimeout(() => this.stopped || this.start(), 250 * this.retry);
    };
  }

  stop() {
    this.stopped = true;
    if (this.socket) this.socket.close();
  }

  failPending() {
    for (const { reject } of this.pending.values()) reject(new RpcError({ message: "the connection was lost" }));
    this.pending.clear();
  }

  read(data) {
    if (typeof data !== "string" || data.length > MAX_MESSAGE) {
      this.handlers.bad("the server sent a message that is not text or is over 8 MiB: ignored");
      return;
    }
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      this.handlers.bad("the server sent a message that is not JSON: ignored");
      return;
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      this.handlers.bad("the server sent a message that is not a JSON object: ignored");
      return;
    }
    const params = message.params && typeof message.params === "object" ? message.params : {};
    if (typeof message.method === "string" && message.id !== undefined) {
      this.handlers.ask(message.id, message.method, params);
    } else if (typeof message.method === "string") {
      this.handlers.notify(message.method, params);
    } else if (this.pending.has(message.id)) {
      const { resolve, reject } = this.pending.get(message.id);
      this.pending.delete(message.id);
      if ("error" in message) reject(new RpcError(message.error));
      else resolve(message.result ?? {});
    } else {
      this.handlers.bad("the server answered a request nobody made: ignored");
    }
  }

  send(message) {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", ...message }));
    return true;
  }

  request(method, params = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (!this.send({ id, method, params })) {
        this.pending.delete(id);
        reject(new RpcError({ message: "not connected" }));
      }
    });
  }

  notify(method, params) {
    this.send(params ? { method, params } : { method });
  }

  answer(id, result) {
    return this.send({ id, result });
  }
}
