import assert from "node:assert/strict";
import type * as vscode from "vscode";
import { describe, it } from "node:test";
import { State } from "vscode-languageclient/node";
import type { Problem, Resolution } from "../../src/common/resolution";
import { ReadkeeperServer, type ServerHooks, type ServerState } from "../../src/common/server";
import * as vscodeapi from "../../src/common/vscodeapi";
import { settingsReader } from "../fakeSettings";
import { AGENT_TOOLS, Methods } from "../../src/agent/contract";
import pkg from "../../package.json";

// The `agent_tools` option the server is started with (contract.ts).
const agent_tools = AGENT_TOOLS;

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

const found: Resolution = { ok: true, python: { command: "/py", source: "setting" }, version: "0.1.0", how: "setting" };

function setup(
  t: { mock: { method: Function } },
  resolve: ServerHooks["resolve"] = async () => found,
  trusted = true,
  user: Record<string, unknown> = { maxTokens: 1000, interpreter: "/py" },
) {
  const log: string[] = [];
  const states: string[] = [];
  const clients: FakeClient[] = [];
  const problems: Problem[] = [];
  t.mock.method(vscodeapi, "getWorkspaceFolders", () => [{ uri: { fsPath: "/ws" }, name: "ws", index: 0 }]);
  t.mock.method(vscodeapi, "getConfiguration", () => settingsReader(user) as vscode.WorkspaceConfiguration);
  t.mock.method(vscodeapi, "isWorkspaceTrusted", () => trusted);
  const silent = { info() {}, warn() {}, error() {}, debug() {}, trace() {} };
  const server = new ReadkeeperServer({
    log: silent as never,
    resolve,
    onProblem: (problem) => problems.push(problem),
    onStateChange: (state: ServerState, detail?: string) => states.push(detail ? `${state}: ${detail}` : state),
    onStarted: () => log.push("onStarted"),
    onStopping: () => log.push("onStopping"),
    createClient: (serverOptions, clientOptions) => {
      const client = new FakeClient(serverOptions, clientOptions, log);
      clients.push(client);
      return client as never;
    },
  });
  return { server, log, states, clients, problems };
}

describe("server lifecycle", () => {
  it("starts <python> -m readkeeper serve with the server settings as initialization options", async (t) => {
    const { server, clients, states } = setup(t);
    await server.start();
    assert.deepEqual(clients[0].serverOptions.command, "/py");
    assert.deepEqual(clients[0].serverOptions.args, ["-P", "-m", "readkeeper", "serve"]);
    assert.equal(clients[0].serverOptions.options.cwd, "/ws");
    assert.deepEqual(clients[0].clientOptions.initializationOptions, { max_tokens: 1000, trusted: true, agent_tools });
    assert.deepEqual(states, ["starting", "running"]);
    assert.ok(server.running);
  });

  it("names exactly the chat agent's tools package.json declares, each by the method it calls", async (t) => {
    const { server, clients } = setup(t);
    await server.start();
    const sent = clients[0].clientOptions.initializationOptions.agent_tools as Record<string, string>;
    const declared = pkg.contributes.languageModelTools.map((tool) => tool.name);
    assert.deepEqual(Object.values(sent).sort(), [...declared].sort());
    for (const [method, tool] of Object.entries(sent)) {
      assert.ok(method in Methods, `${method} is not a readkeeper method the extension calls`);
      assert.match(tool, /^readkeeper_[a-z_]+$/); // the names the server takes
    }
    // Each tool calls the method it is named for (its input -> that method's params).
    assert.equal(sent.read, "readkeeper_read");
    assert.equal(sent.grep, "readkeeper_grep");
  });

  it("starts a limited server in Restricted Mode: trusted false, no user-only setting sent", async (t) => {
    const user = { maxTokens: 1000, allowedPaths: ["/home/me/notes"], watcher: "watchman" };
    const { server, clients } = setup(t, async () => found, false, user);
    await server.start();
    assert.deepEqual(clients[0].clientOptions.initializationOptions, { max_tokens: 1000, trusted: false, agent_tools });
    const middleware = clients[0].clientOptions.middleware.workspace.configuration;
    const answer = await middleware({ items: [{ section: "readkeeper" }] }, {}, async () => [{}]);
    assert.deepEqual(answer, [{ max_tokens: 1000 }]);
    server.pushSettings();
    assert.deepEqual(clients[0].notifications[0][1], { settings: { readkeeper: { max_tokens: 1000 } } });
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

  it("does not start without a Python for the server, and says what to do", async (t) => {
    const problem: Problem = {
      message: "readkeeper could not download its server's dependencies ...",
      status: "offline: could not install the server's dependencies",
      actions: ["Retry", "Show Log"],
    };
    const { server, clients, states, problems } = setup(t, async () => ({ ok: false, problem }));
    await server.start();
    assert.equal(clients.length, 0);
    assert.deepEqual(states, ["starting", "error: offline: could not install the server's dependencies"]);
    assert.deepEqual(problems, [problem]);
    assert.equal(server.running, undefined);
    assert.equal(server.detail, "offline: could not install the server's dependencies");
  });

  it("a failure while finding the Python is a problem shown, not a silent error", async (t) => {
    const { server, states, problems } = setup(t, async () => {
      throw new Error("EACCES: global storage");
    });
    await server.start();
    assert.equal(states.at(-1), "error: no Python to run the server; see the log");
    assert.match(problems[0].message, /could not find or set up a Python to run its server: Error: EACCES/);
    assert.deepEqual(problems[0].actions, ["Retry", "Show Log"]);
  });

  it("starts the private environment's Python", async (t) => {
    const { server, clients } = setup(t, async () => ({
      ok: true,
      python: { command: "/storage/python-env/bin/python", source: "private-env" },
      version: "0.1.0",
      how: "created",
    }));
    await server.start();
    assert.equal(clients[0].serverOptions.command, "/storage/python-env/bin/python");
    assert.deepEqual(clients[0].serverOptions.args, ["-P", "-m", "readkeeper", "serve"]);
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
