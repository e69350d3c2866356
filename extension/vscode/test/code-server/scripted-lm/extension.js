// Test-only extension for e2e-code-server.sh.
//
// 1. Reports whether readkeeper's extension activated and its server answered.
// 2. Registers a scripted language model ("Scripted"): each reply is the next fixed
//    step of an agent turn: read app.py, read it again (readkeeper answers with a stub),
//    edit it (VS Code asks for confirmation), then a closing text. Every request's tool
//    results are logged, so the driver can check what the real chat panel passed back.
// 3. A fallback command that invokes the same tools with vscode.lm.invokeTool.
//
// Results go to $READKEEPER_TEST_OUT (a folder) as JSON files, with the time each
// happened (ms since the epoch), so the driver can measure install-to-first-tool-result.

const fs = require("node:fs");
const path = require("node:path");
const vscode = require("vscode");

const OUT = process.env.READKEEPER_TEST_OUT || path.join(require("node:os").tmpdir(), "readkeeper-e2e");
fs.mkdirSync(OUT, { recursive: true });

function write(name, data) {
  fs.writeFileSync(path.join(OUT, name), JSON.stringify(data, null, 2));
}

function append(name, data) {
  fs.appendFileSync(path.join(OUT, name), JSON.stringify(data) + "\n");
}

const STEPS = [
  { tool: "readkeeper_read", input: { file_path: "app.py" } },
  { tool: "readkeeper_read", input: { file_path: "app.py" } },
  { tool: "readkeeper_edit", input: { file_path: "app.py", old_string: "return sku", new_string: "return sku.upper()" } },
];

function partText(part) {
  if (part instanceof vscode.LanguageModelTextPart) return part.value;
  if (part && typeof part.value === "string") return part.value;
  if (part && part.data && part.mimeType) return `<${part.mimeType}>`;
  return JSON.stringify(part);
}

/** Tool results in the conversation so far, oldest first. */
function toolResults(messages) {
  const results = [];
  for (const message of messages) {
    for (const part of message.content || []) {
      if (part instanceof vscode.LanguageModelToolResultPart || (part && part.callId && Array.isArray(part.content))) {
        results.push({ callId: part.callId, text: (part.content || []).map(partText).join("\n") });
      }
    }
  }
  return results;
}

const model = {
  id: "scripted-readkeeper",
  name: "Scripted",
  family: "scripted",
  version: "1",
  maxInputTokens: 100000,
  maxOutputTokens: 4000,
  tooltip: "Replies with fixed readkeeper tool calls (test only)",
  capabilities: { toolCalling: true, imageInput: false },
  isUserSelectable: true,
};

const provider = {
  provideLanguageModelChatInformation() {
    return [model];
  },
  async provideLanguageModelChatResponse(_model, messages, options, progress) {
    const results = toolResults(messages);
    const tools = (options.tools || []).map((t) => t.name);
    append("requests.jsonl", { at: Date.now(), results, tools, count: messages.length });
    const step = STEPS[results.length];
    if (step) {
      // The chat may prefix tool names; find ours among the tools it offers.
      const name = tools.find((t) => t === step.tool || t.endsWith(step.tool)) || step.tool;
      progress.report(new vscode.LanguageModelToolCallPart(`call-${results.length}`, name, step.input));
      return;
    }
    write("chat-results.json", { at: Date.now(), results });
    progress.report(new vscode.LanguageModelTextPart("readkeeper e2e: done."));
  },
  async provideTokenCount(_model, text) {
    const value = typeof text === "string" ? text : JSON.stringify(text);
    return Math.ceil(value.length / 4);
  },
};

async function readkeeperApi() {
  const ext = vscode.extensions.getExtension("readkeeper.readkeeper");
  if (!ext) return undefined;
  return ext.isActive ? ext.exports : await ext.activate();
}

async function report() {
  const status = { activatedAt: Date.now(), readkeeperInstalled: false, active: false, state: "", stats: null, error: null };
  try {
    const api = await readkeeperApi();
    status.readkeeperInstalled = !!vscode.extensions.getExtension("readkeeper.readkeeper");
    status.active = !!api;
    // The first start sets up readkeeper's environment (pip fetches its dependencies).
    const deadline = Date.now() + 600000;
    while (api && api.state() !== "running" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
    }
    status.state = api ? api.state() : "";
    status.stateAt = Date.now();
    if (api && status.state === "running") {
      status.stats = await api.request("readkeeper/stats", { session: api.session() });
    }
  } catch (error) {
    status.error = String(error && error.stack ? error.stack : error);
  }
  status.tools = vscode.lm.tools.filter((t) => t.name.startsWith("readkeeper_")).map((t) => t.name);
  status.hasChatProviderApi = typeof vscode.lm.registerLanguageModelChatProvider === "function";
  try {
    const models = await vscode.lm.selectChatModels();
    status.models = models.map((m) => `${m.vendor}/${m.id}`);
  } catch (error) {
    status.models = String(error);
  }
  status.version = vscode.version;
  write("activation.json", status);
}

async function invokeTools() {
  const results = [];
  for (const step of STEPS) {
    try {
      const result = await vscode.lm.invokeTool(step.tool, { input: step.input, toolInvocationToken: undefined });
      results.push({ tool: step.tool, text: result.content.map(partText).join("\n") });
    } catch (error) {
      results.push({ tool: step.tool, error: String(error && error.message ? error.message : error) });
    }
  }
  write("invoke-results.json", { at: Date.now(), results });
  return results;
}

function activate(context) {
  if (typeof vscode.lm.registerLanguageModelChatProvider === "function") {
    context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider("scripted", provider));
  }
  context.subscriptions.push(vscode.commands.registerCommand("readkeeperE2E.invokeTools", invokeTools));
  void report();
}

module.exports = { activate };
