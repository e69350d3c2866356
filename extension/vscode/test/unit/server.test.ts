import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { State } from "vscode-languageclient/node";
import { ReadkeeperServer, type ServerHooks, type ServerState } from "../../src/server";
import * as vscodeapi from "../../src/vscodeapi";

class FakeClient {
  state = State.Stopped;
  started = 0;
  stopped = 0;
  notifications: [unknown, unknown][] = [];
  private listeners: ((e: { oldState: State; newState: State }) => void)[] = [];
  constructor(
    public serverOptions: any,
    public clientOptions: any,
    private readonly log: string[],
  ) {}
  onDidChangeState(listener: (e: { oldState: State; newState: State }) => void) {
    this.listeners.push(listener);
    return { dispose() {} };
  }
  async start() {
    this.log.push("start");
    await new Promise((r) => setTimeout(r, 20));
    this.started += 1;
    this.state = State.Running;
  }
  async stop() {
    this.log.push("stop");
    await new Promise((r) => setTimeout(r, 20));
    this.stopped += 1;
    this.state = State.Stopped;
  }
  async dispose() {}
  async sendNotification(type: unknown, params: unknown) {
    this.notifications.push([type, params]);
  }
  crash() {
    this.state = State.Stopped;
    for (const l of this.listeners) l({ oldState: State.Running, newState: State.Stopped });
  }
}

function setup(t: { mock: { method: Function } }, check: ServerHooks["check"] = async () => ({ ok: true, version: "0.1.0" })) {
  const log: string[] = [];
  const states: string[] = [];
  const clients: FakeClient[] = [];
  const notImportable: unknown[] = [];
  t.mock.method(vscodeapi, "getWorkspaceFolders", () => [{ uri: { fsPath: "/ws" }, name: "ws", index: 0 }]);
  t.mock.method(vscodeapi, "getConfiguration", () => ({
    get: (key: string) => ({ maxTokens: 1000, interpreter: "/py" })[key as "maxTokens"],
  }));
  const silent = { info() {}, warn() {}, error() {}, debug() {}, trace() {} };
  const server = new ReadkeeperServer({
    log: silent as never,
    interpreter: async () => ({ command: "/py", source: "setting" }),
    onNotImportable: (python, c) => notImportable.push([python, c]),
    onStateChange: (state: ServerState, detail?: string) => states.push(detail ? `${state}: ${detail}` : state),
    onStarted: () => log.push("onStarted"),
    onStopping: () => log.push("onStopping"),
    check,
    createClient: (serverOptions, clientOptions) => {
      const client = new FakeClient(serverOptions, clientOptions, log);
      clients.push(client);
      return client as never;
    },
  });
  return { server, log, states, clients, notImportable };
}

describe("server lifecycle", () => {
  it("starts <python> -m readkeeper serve with the server settings as initialization options", async (t) => {
    const { server, clients, states } = setup(t);
    await server.start();
    assert.deepEqual(clients[0].serverOptions.command, "/py");
    assert.deepEqual(clients[0].serverOptions.args, ["-m", "readkeeper", "serve"]);
    assert.equal(clients[0].serverOptions.options.cwd, "/ws");
    assert.deepEqual(clients[0].clientOptions.initializationOptions, { max_tokens: 1000 });
    assert.deepEqual(states, ["starting", "running"]);
    assert.ok(server.running);
  });

  it("answers workspace/configuration for readkeeper with the server's keys only", async (t) => {
    const { server, clients } = setup(t);
    await server.start();
    const middleware = clients[0].clientOptions.middleware.workspace.configuration;
    const answer = await middleware(
      { items: [{ section: "readkeeper" }, { section: "python" }] },
      {},
      async () => [{ maxTokens: 1000, interpreter: "/py" }, { other: 1 }],
    );
    assert.deepEqual(answer, [{ max_tokens: 1000 }, { other: 1 }]);
  });

  it("restarts once for a burst of restart requests, never two clients at once", async (t) => {
    const { server, clients, log } = setup(t);
    await server.start();
    await Promise.all([server.restart(), server.restart(), server.restart()]);
    assert.equal(clients.length, 2, "one restart for the burst");
    assert.deepEqual(log, ["start", "onStarted", "onStopping", "stop", "start", "onStarted"]);
    assert.equal(clients[0].state, State.Stopped);
    assert.equal(clients[1].state, State.Running);
  });

  it("does not start when readkeeper is not importable, and says why", async (t) => {
    const { server, clients, states, notImportable } = setup(t, async () => ({
      ok: false,
      reason: "not_installed",
      detail: "readkeeper is not installed for /py",
    }));
    await server.start();
    assert.equal(clients.length, 0);
    assert.deepEqual(states, ["starting", "error: readkeeper not installed"]);
    assert.equal(notImportable.length, 1);
    assert.equal(server.running, undefined);
  });

  it("shows an error when the running server dies", async (t) => {
    const { server, clients, states } = setup(t);
    await server.start();
    clients[0].crash();
    assert.equal(states.at(-1), "error: the server stopped; see the log");
  });

  it("pushes changed settings to the running server", async (t) => {
    const { server, clients } = setup(t);
    await server.start();
    server.pushSettings();
    assert.deepEqual(clients[0].notifications[0][1], { settings: { readkeeper: { max_tokens: 1000 } } });
  });
});
