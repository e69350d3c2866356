// End to end: the extension's tool handlers, diagnostics forwarder and chat participant
// against a live `python -m readkeeper serve`, over vscode-jsonrpc (the transport
// vscode-languageclient uses). The Python is $READKEEPER_PYTHON, else the repository's
// .venv, else python3.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import * as fake from "../fakeVscode";
import { chatHandler } from "../../src/agent/chat";
import { AGENT_TOOLS, METHOD_NOT_FOUND, type RequestSender } from "../../src/agent/contract";
import { DiagnosticsForwarder } from "../../src/agent/diagnostics";
import { probePython, serverCommand } from "../../src/common/python";
import { serverSettings } from "../../src/common/settings";
import { settingsReader } from "../fakeSettings";
import {
  attachmentsTool,
  editTool,
  readTool,
  type ToolContext,
  writeTool,
} from "../../src/agent/tools";
import { UNCHANGED_NOTE } from "../../src/agent/render";

const REPO = path.resolve(__dirname, "../../../../..");

function python(): string {
  if (process.env.READKEEPER_PYTHON) return process.env.READKEEPER_PYTHON;
  const venv = path.join(REPO, ".venv", "bin", "python");
  return fs.existsSync(venv) ? venv : "python3";
}

/** Poll `check` until it returns something truthy, and return that; fail saying what
 * was awaited when `timeoutMs` passes first. Waiting is on events, never a fixed sleep. */
async function until<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs = 15000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type ToolResult = { content: { value?: string; mimeType?: string }[] };
const token = {} as never;
const textOf = (result: unknown) =>
  (result as ToolResult).content.map((p) => p.value ?? `<${p.mimeType}>`).join("\n");

describe("the extension's handlers against a live readkeeper", () => {
  let proc: ChildProcess;
  let connection: MessageConnection;
  let root: string;
  let stderr = "";
  const notices: unknown[] = [];
  let configurationAsked = false;
  const missing = new Set<string>();

  const client: RequestSender = {
    sendRequest: <R>(method: string, params: unknown) => connection.sendRequest<R>(method, params),
  };
  const context: ToolContext = {
    client: () => client,
    session: () => "e2e-chat",
    activeEditor: () => ({
      file_path: path.join(root, "app.py"),
      selection: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } },
    }),
  };
  const invoke = async (tool: { invoke: Function }, input: unknown) =>
    textOf(await tool.invoke({ input, toolInvocationToken: undefined }, token));

  const needs = (t: { skip: (reason: string) => void }, method: string) => {
    if (missing.has(method)) {
      t.skip(`the server has no ${method} yet`);
      return true;
    }
    return false;
  };

  before(async () => {
    const probe = await probePython(python());
    assert.ok(
      probe.ok && probe.info.readkeeper !== undefined,
      `readkeeper must be importable with ${python()}: ${JSON.stringify(probe)}`,
    );
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "readkeeper-e2e-")));
    const lines = Array.from({ length: 10 }, (_, i) => `line_${i + 1} = ${i + 1}`);
    fs.writeFileSync(path.join(root, "app.py"), "def restock(sku):\n    return sku\n");
    fs.writeFileSync(path.join(root, "ten.py"), lines.join("\n") + "\n");

    const { command, args } = serverCommand(python());
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith("READKEEPER_")),
    );
    proc = spawn(command, args, { cwd: root, env, stdio: ["pipe", "pipe", "pipe"] });
    proc.stderr!.on("data", (chunk) => (stderr += chunk));
    connection = createMessageConnection(
      new StreamMessageReader(proc.stdout!),
      new StreamMessageWriter(proc.stdin!),
    );
    // The extension answers workspace/configuration with the server's settings only.
    const vscodeSettings: Record<string, unknown> = { defaultLimit: 4, interpreter: "/ignored" };
    connection.onRequest("workspace/configuration", (params: { items: { section?: string }[] }) => {
      configurationAsked = true;
      return params.items.map((item) =>
        item.section === "readkeeper"
          ? serverSettings(settingsReader(vscodeSettings))
          : null,
      );
    });
    connection.onRequest("window/workDoneProgress/create", () => null);
    connection.onNotification("readkeeper/didChangeReadFiles", (params: unknown) => notices.push(params));
    connection.onNotification(() => undefined); // logMessage, progress, ...
    connection.listen();

    const uri = pathToFileURL(root).href;
    await connection.sendRequest("initialize", {
      processId: process.pid,
      rootUri: uri,
      workspaceFolders: [{ uri, name: "ws" }],
      capabilities: { workspace: { configuration: true, didChangeConfiguration: {} }, window: {} },
      // As the extension starts it (server.ts): the chat agent's tools named.
      initializationOptions: { ...serverSettings(settingsReader({})), agent_tools: AGENT_TOOLS },
    });
    await connection.sendNotification("initialized", {});
    await until(() => configurationAsked, "the server to ask for workspace/configuration");
    // Its answer applies once the server has it: a read (in a session of its own) shows it.
    await until(async () => {
      const probe = await connection.sendRequest<{ file: { num_lines: number } }>("readkeeper/read", {
        file_path: "ten.py",
        session: "settings-probe",
        force: true,
      });
      return probe.file.num_lines === 4;
    }, "defaultLimit 4 from workspace/configuration to apply");

    for (const method of ["readkeeper/edit", "readkeeper/write", "readkeeper/attachments", "readkeeper/changes"]) {
      try {
        await connection.sendRequest(method, { session: "probe" });
      } catch (error) {
        if ((error as { code?: number }).code === METHOD_NOT_FOUND) missing.add(method);
      }
    }
  });

  after(async () => {
    if (connection) {
      await Promise.race([connection.sendRequest("shutdown"), new Promise((r) => setTimeout(r, 3000))]);
      await connection.sendNotification("exit");
      connection.dispose();
    }
    if (proc && proc.exitCode === null) {
      await Promise.race([
        new Promise((resolve) => proc.once("exit", resolve)),
        new Promise((resolve) => setTimeout(resolve, 5000)),
      ]);
      if (proc.exitCode === null) proc.kill();
    }
    if (root) fs.rmSync(root, { recursive: true, force: true });
    if (process.exitCode) console.error(stderr);
  });

  it("reads a file, then gets a stub on re-read, and the content again with force", async () => {
    const read = readTool(context);
    const first = await invoke(read, { file_path: "app.py" });
    assert.equal(first, "     1\tdef restock(sku):\n     2\t    return sku");
    const second = await invoke(read, { file_path: "app.py" });
    assert.ok(second.startsWith(UNCHANGED_NOTE), second);
    assert.ok(second.includes(path.join(root, "app.py")));
    const forced = await invoke(read, { file_path: "app.py", force: true });
    assert.ok(forced.startsWith("     1\tdef restock"));
  });

  it("a symbol read, as an outline's note offers it, gets one function", async () => {
    const functions = Array.from(
      { length: 800 },
      (_, i) => `def handler_${i}(request):\n    value = request.get("field_${i}")\n    return value * ${i}\n\n`,
    );
    fs.writeFileSync(path.join(root, "big.py"), functions.join(""));
    const one = await invoke(readTool(context), { file_path: "big.py", symbol: "handler_7" });
    assert.match(one, /^\s+29\tdef handler_7\(request\):/, one);
    assert.ok(!one.includes("handler_8("), one);
  });

  it("settings answered through workspace/configuration reach the server", async () => {
    const text = await invoke(readTool(context), { file_path: "ten.py" });
    assert.ok(text.startsWith("     1\tline_1 = 1\n"), text);
    assert.ok(!text.includes("line_5"), "default_limit 4 from the VS Code settings applies");
    assert.match(text, /offset/, "a partial read says how to continue");
  });

  it("a typo'd path reaches the model as not_found with suggestions", async () => {
    await assert.rejects(invoke(readTool(context), { file_path: "ap.py" }), (error: Error) => {
      assert.match(error.message, /^not_found: /);
      assert.match(error.message, /app\.py/);
      return true;
    });
  });

  it("an error's next steps name the agent's own tools, never a method it cannot call", async () => {
    fs.mkdirSync(path.join(root, "pkg"), { recursive: true });
    await assert.rejects(invoke(readTool(context), { file_path: "pkg" }), (error: Error) => {
      assert.match(error.message, /^is_directory: /);
      assert.ok(!error.message.includes("readkeeper/"), error.message);
      assert.match(error.message, /readkeeper's list, which is not one of your tools here: the editor's own file tools/);
      return true;
    });
    fs.writeFileSync(path.join(root, "notes.txt"), "alpha\nbeta\n");
    await assert.rejects(
      invoke(editTool(context), { file_path: "notes.txt", old_string: "alpha", new_string: "gamma" }),
      (error: Error) => {
        assert.match(error.message, /^not_read: /);
        assert.ok(!error.message.includes("readkeeper/"), error.message);
        assert.ok(error.message.includes('the readkeeper_read tool with {"file_path": '), error.message);
        return true;
      },
    );
  });

  it("an edit after an external change is refused as stale, and works after a re-read", async (t) => {
    if (needs(t, "readkeeper/edit")) return;
    const file = path.join(root, "app.py");
    await invoke(readTool(context), { file_path: file, force: true });
    fs.writeFileSync(file, "def restock(sku):\n    return sku * 2\n");
    const edit = editTool(context);
    await assert.rejects(
      invoke(edit, { file_path: file, old_string: "return sku", new_string: "return None" }),
      /^Error: stale: .*changed since this session read it/,
    );
    await invoke(readTool(context), { file_path: file });
    const done = await invoke(edit, { file_path: file, old_string: "sku * 2", new_string: "sku * 3" });
    assert.match(done, /^Edited .*app\.py: 1 replacement\./);
    assert.equal(fs.readFileSync(file, "utf8"), "def restock(sku):\n    return sku * 3\n");
  });

  it("writes a new file", async (t) => {
    if (needs(t, "readkeeper/write")) return;
    const text = await invoke(writeTool(context), { file_path: "pkg/new.py", content: "x = 1\n" });
    assert.match(text, /^Created .*pkg\/new\.py/);
    assert.equal(fs.readFileSync(path.join(root, "pkg", "new.py"), "utf8"), "x = 1\n");
  });

  it("forwarded diagnostics come back in attachments, with the selection", async (t) => {
    if (needs(t, "readkeeper/attachments")) return;
    const uri = fake.Uri.parse(pathToFileURL(path.join(root, "app.py")).href);
    let listener: ((uris: readonly fake.Uri[]) => void) | undefined;
    const diagnostic = new fake.Diagnostic(new fake.Range(1, 4, 1, 10), "'sku' is possibly unbound");
    diagnostic.source = "pyright";
    const source = {
      get: () => [diagnostic],
      all: () => [],
      version: () => undefined,
      onDidChange: (l: (uris: readonly fake.Uri[]) => void) => {
        listener = l;
        return { dispose() {} };
      },
    };
    const forwarder = new DiagnosticsForwarder(
      (params) => connection.sendNotification("readkeeper/didChangeDiagnostics", params),
      source as never,
      { debounceMs: 10, maxPerFile: 50 },
    );
    forwarder.start();
    listener!([uri]);
    let text = "";
    try {
      // The forwarder sends after its debounce; the server has it once attachments show it.
      await until(async () => {
        text = await invoke(attachmentsTool(context), { types: ["diagnostics", "selection"] });
        return /possibly unbound/.test(text);
      }, "the forwarded diagnostic in attachments");
    } finally {
      forwarder.dispose();
    }
    assert.match(text, /possibly unbound/);
    assert.match(text, /type="diagnostics"/);
    assert.match(text, /type="selection"/);
    assert.match(text, /def restock/);
  });

  it("@readkeeper answers what changed since the agent read it", async (t) => {
    if (needs(t, "readkeeper/changes")) return;
    const file = path.join(root, "ten.py");
    await invoke(readTool(context), { file_path: file, limit: 100, force: true });
    fs.appendFileSync(file, "line_11 = 11\n");
    let markdown = "";
    const stream = { markdown: (v: string) => (markdown += v), progress: () => undefined };
    await until(async () => {
      markdown = "";
      await chatHandler(context)(
        { prompt: "what changed since you read it?", references: [], toolReferences: [] } as never,
        {} as never,
        stream as never,
        token,
      );
      return markdown.includes("ten.py");
    }, "the watcher's notice of the change to ten.py");
    assert.match(markdown, /ten\.py`: \*\*modified\*\*/);
    assert.match(markdown, /\+line_11 = 11/);
    // The same change also comes as a notice the editor may show: pushed after the
    // watcher's debounce, which the answer above need not wait for (it looks at a file
    // no notice told of yet), so it may come a little after that answer.
    await until(
      () => notices.some((n) => JSON.stringify(n).includes("ten.py")),
      "a didChangeReadFiles notice of ten.py",
    );
  });

  it("stats count the stub the re-read got", async () => {
    const stats = await client.sendRequest<Record<string, Record<string, unknown>>>("readkeeper/stats", {
      session: "e2e-chat",
    });
    // The count itself: the first test's re-read of app.py was answered with a stub.
    const hits = stats.session.dedup_hits;
    assert.equal(typeof hits, "number", JSON.stringify(stats.session));
    assert.ok((hits as number) >= 1, `dedup_hits ${String(hits)}: ${JSON.stringify(stats.session)}`);
  });
});
