import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as fake from "../fakeVscode";
import { chatHandler, intentOf, mentionedPaths } from "../../src/agent/chat";
import type { RequestSender } from "../../src/agent/contract";
import { changesMarkdown } from "../../src/agent/render";
import type { ToolContext } from "../../src/agent/tools";
import * as vscodeapi from "../../src/common/vscodeapi";

class Stream {
  out: string[] = [];
  markdown(value: string) {
    this.out.push(value);
  }
  progress(value: string) {
    this.out.push(`(progress) ${value}`);
  }
  get text() {
    return this.out.join("");
  }
}

function context(answers: Record<string, unknown>, sent: [string, unknown][] = []): ToolContext {
  const client: RequestSender = {
    sendRequest: async <R>(method: string, params: unknown) => {
      sent.push([method, params]);
      const answer = answers[method];
      if (answer instanceof Error || (answer && typeof answer === "object" && "code" in answer)) throw answer;
      return answer as R;
    },
  };
  return { client: () => client, session: () => "chat", activeEditor: () => undefined };
}

const req = (prompt: string, command?: string, references: unknown[] = []) =>
  ({ prompt, command, references, toolReferences: [] }) as never;

describe("@readkeeper", () => {
  it("understands slash commands and plain questions", () => {
    assert.equal(intentOf("stats", ""), "stats");
    assert.equal(intentOf(undefined, "stats"), "stats");
    assert.equal(intentOf(undefined, "What changed since you read it?"), "changes");
    assert.equal(intentOf(undefined, "which files changed since you read them"), "changes");
    assert.equal(intentOf(undefined, "How does restock work?"), "ask");
    assert.equal(intentOf("context", "anything"), "context");
  });

  it("answers 'what changed' with readkeeper/changes, diffs in diff blocks", async () => {
    const sent: [string, unknown][] = [];
    const ctx = context({
      "readkeeper/changes": {
        changes: [{ file_path: "/ws/a.py", kind: "modified", diff: "-x = 1\n+x = 2", truncated: false }],
      },
    }, sent);
    const stream = new Stream();
    await chatHandler(ctx)(req("what changed since you read it?"), {} as never, stream as never, {} as never);
    assert.deepEqual(sent, [["readkeeper/changes", { session: "chat" }]]);
    assert.match(stream.text, /`\/ws\/a.py`: \*\*modified\*\*\n```diff\n-x = 1\n\+x = 2\n```/);
    assert.equal(changesMarkdown({ changes: [] }), "No file the agent read has changed since it read it.");
  });

  it("shows stats as a table", async () => {
    const ctx = context({ "readkeeper/stats": { total: { reads: 3, dedup_hits: 1 }, session: { reads: 2 }, files_in_read_state: 2 } });
    const stream = new Stream();
    await chatHandler(ctx)(req("", "stats"), {} as never, stream as never, {} as never);
    assert.match(stream.text, /\| reads \| 2 \| 3 \|/);
    assert.match(stream.text, /\| dedup hits \| – \| 1 \|/);
  });

  it("attaches the budgeted context to a question and streams the model's answer", async (t) => {
    const sent: [string, unknown][] = [];
    const ctx = context({
      "readkeeper/attachments": {
        attachments: [{ type: "diagnostics", priority: 1, tokens: 5, content: "a.py:1: error: boom", truncated: false }],
        dropped: [],
        used_tokens: 5,
        budget_tokens: 60000,
      },
    }, sent);
    let seen: fake.LanguageModelChatMessage[] = [];
    const model = {
      sendRequest: async (messages: fake.LanguageModelChatMessage[]) => {
        seen = [...messages];
        return {
          stream: (async function* () {
            yield new fake.LanguageModelTextPart("It is ");
            yield new fake.LanguageModelTextPart("broken.");
          })(),
        };
      },
    };
    t.mock.method(vscodeapi, "selectChatModels", async () => [model]);
    t.mock.method(vscodeapi, "lmTools", () => []);
    const stream = new Stream();
    const references = [{ id: "file", value: fake.Uri.file("/ws/b.py") }];
    await chatHandler(ctx)(req("why does it fail?", undefined, references), {} as never, stream as never, {} as never);
    assert.deepEqual(sent[0], ["readkeeper/attachments", { session: "chat", mentions: ["/ws/b.py"] }]);
    assert.match(String(seen[0].content), /a.py:1: error: boom/);
    assert.equal(seen[1].content, "why does it fail?");
    assert.match(stream.text, /It is broken\.$/);
  });

  it("runs the model's readkeeper tool calls through VS Code and returns the results", async (t) => {
    const ctx = context({
      "readkeeper/attachments": { attachments: [], dropped: [], used_tokens: 0, budget_tokens: 60000 },
    });
    const offered: unknown[] = [];
    const requests: fake.LanguageModelChatMessage[][] = [];
    const script = [
      [new fake.LanguageModelToolCallPart("c1", "readkeeper_read", { file_path: "app.py" })],
      [new fake.LanguageModelToolCallPart("c2", "readkeeper_edit", { file_path: "app.py", old_string: "a", new_string: "b" })],
      [new fake.LanguageModelTextPart("Done.")],
    ];
    const model = {
      sendRequest: async (messages: fake.LanguageModelChatMessage[], options: { tools: unknown[] }) => {
        requests.push([...messages]);
        offered.push(options.tools);
        const parts = script[requests.length - 1];
        return { stream: (async function* () { yield* parts; })() };
      },
    };
    t.mock.method(vscodeapi, "selectChatModels", async () => [model]);
    t.mock.method(vscodeapi, "lmTools", () => [
      { name: "readkeeper_read", description: "read", inputSchema: {}, tags: [] },
      { name: "other_tool", description: "x", inputSchema: {}, tags: [] },
    ]);
    const invoked: [string, unknown, unknown][] = [];
    t.mock.method(vscodeapi, "invokeTool", async (name: string, options: { input: unknown; toolInvocationToken: unknown }) => {
      invoked.push([name, options.input, options.toolInvocationToken]);
      if (name === "readkeeper_edit") throw new Error("stale: app.py changed since you read it.");
      return { content: [new fake.LanguageModelTextPart("     1\ta")] };
    });
    const stream = new Stream();
    const request = { ...(req("fix it") as object), toolInvocationToken: "chat-token" };
    const result = await chatHandler(ctx)(request as never, {} as never, stream as never, { isCancellationRequested: false } as never);
    assert.deepEqual(invoked, [
      ["readkeeper_read", { file_path: "app.py" }, "chat-token"],
      ["readkeeper_edit", { file_path: "app.py", old_string: "a", new_string: "b" }, "chat-token"],
    ]);
    assert.deepEqual(offered[0], [{ name: "readkeeper_read", description: "read", inputSchema: {} }]);
    const second = requests[1];
    const toolResult = (second[second.length - 1].content as fake.LanguageModelToolResultPart[])[0];
    assert.equal(toolResult.callId, "c1");
    assert.equal((toolResult.content[0] as fake.LanguageModelTextPart).value, "     1\ta");
    const third = requests[2];
    const refused = (third[third.length - 1].content as fake.LanguageModelToolResultPart[])[0];
    assert.match((refused.content[0] as fake.LanguageModelTextPart).value, /^Error: stale: app.py changed/);
    assert.match(stream.text, /Done\.$/);
    assert.equal((result as { metadata: { rounds: number } }).metadata.rounds, 3);
  });

  it("says plainly when the server lacks a method, naming the method the intent called", async () => {
    const missing = (method: string) => ({ [method]: { code: -32601, message: `Method Not Found: ${method}` } });
    const cases: [string | undefined, string, string][] = [
      ["changes", "", "readkeeper/changes"],
      ["stats", "", "readkeeper/stats"],
      ["forget", "", "readkeeper/forget"],
      ["context", "", "readkeeper/attachments"],
      [undefined, "why does it fail?", "readkeeper/attachments"],
    ];
    for (const [command, prompt, method] of cases) {
      const stream = new Stream();
      const result = await chatHandler(context(missing(method)))(req(prompt, command), {} as never, stream as never, {} as never);
      const expected = `This readkeeper server does not support ${method}; update readkeeper.`;
      assert.ok(stream.text.endsWith(`readkeeper: ${expected}`), stream.text);
      assert.deepEqual((result as { errorDetails?: unknown }).errorDetails, { message: expected });
    }
  });

  it("shows the server's own message for any other failure", async () => {
    const ctx = context({ "readkeeper/changes": { code: -32803, message: "No session named chat.", data: { kind: "invalid" } } });
    const stream = new Stream();
    const result = await chatHandler(ctx)(req("", "changes"), {} as never, stream as never, {} as never);
    assert.equal(stream.text, "readkeeper: invalid: No session named chat.");
    assert.deepEqual((result as { errorDetails?: unknown }).errorDetails, { message: "invalid: No session named chat." });
  });

  it("collects file paths from references", () => {
    const paths = mentionedPaths([
      { id: "a", value: fake.Uri.file("/ws/a.py") },
      { id: "b", value: { uri: fake.Uri.file("/ws/b.py"), range: {} } },
      { id: "c", value: "plain text" },
    ] as never);
    assert.deepEqual(paths, ["/ws/a.py", "/ws/b.py"]);
  });
});
