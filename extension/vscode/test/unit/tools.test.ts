import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import * as fake from "../fakeVscode";
import type { RequestSender } from "../../src/agent/contract";
import { type Part, renderReadResult } from "../../src/agent/render";
import {
  attachmentsParams,
  attachmentsTool,
  describeEditor,
  editConfirmation,
  editParams,
  editTool,
  grepParams,
  grepTool,
  readParams,
  readTool,
  registerTools,
  toToolResult,
  type ToolContext,
  writeParams,
  writeTool,
} from "../../src/agent/tools";
import * as vscodeapi from "../../src/common/vscodeapi";
import pkg from "../../package.json";
import type { EditParams } from "../../src/protocol";

const token = {} as never;
const SEL = { start: { line: 1, character: 0 }, end: { line: 2, character: 4 } };

function textOf(parts: Part[]): string {
  return parts.map((p) => (p.kind === "text" ? p.text : `<image ${p.mimeType}>`)).join("\n");
}

function contextWith(client: RequestSender | undefined, calls: string[] = []): ToolContext {
  return {
    client: () => client,
    session: () => "chat-1",
    activeEditor: () => ({ file_path: "/ws/a.py", selection: SEL }),
    afterCall: (method) => calls.push(method),
  };
}

describe("tool input -> request params", () => {
  it("read: the chat session is added, absent fields dropped", () => {
    assert.deepEqual(readParams({ file_path: "src/a.py", offset: "20", limit: undefined }, "s"), {
      file_path: "src/a.py",
      offset: "20",
      session: "s",
    });
    assert.throws(() => readParams({ file_path: "" }, "s"), /file_path is required/);
  });

  it("read: a symbol named in an outline's note reaches the server", () => {
    assert.deepEqual(readParams({ file_path: "src/big.py", symbol: "Parser.parse" }, "s"), {
      file_path: "src/big.py",
      symbol: "Parser.parse",
      session: "s",
    });
  });

  it("read: every input the tool's schema lists reaches the server (what an error asks for)", () => {
    // A scanned PDF's error asks for pages="1", render=true: both must get through.
    const tool = pkg.contributes.languageModelTools.find((t) => t.name === "readkeeper_read");
    assert.ok(tool);
    const listed = Object.keys(tool.inputSchema.properties).sort();
    for (const asked of ["render", "include_images", "estimate", "pages", "symbol", "force"]) {
      assert.ok(listed.includes(asked), `${asked} is not in the read tool's schema`);
    }
    const input = Object.fromEntries(
      listed.map((key) => [key, key === "file_path" ? "doc.pdf" : key === "pages" ? "1" : 3]),
    );
    const sent = readParams(input as never, "s");
    assert.deepEqual(Object.keys(sent).sort(), [...listed, "session"].sort());
  });

  it("edit and write keep every field the protocol names", () => {
    assert.deepEqual(editParams({ file_path: "a", old_string: "x", new_string: "y", replace_all: true }, "s"), {
      file_path: "a",
      old_string: "x",
      new_string: "y",
      replace_all: true,
      session: "s",
    });
    // An empty new_string deletes: it must not be dropped as "absent".
    assert.equal((editParams({ file_path: "a", old_string: "x", new_string: "" }, "s") as EditParams).new_string, "");
    // A batch and anchored edits are forwarded as given (the server checks their shape).
    const anchored = [{ op: "replace" as const, start: "12ab", end: "14cd", lines: ["x"] }];
    assert.deepEqual(editParams({ file_path: "a", anchor_edits: anchored }, "s"), {
      file_path: "a",
      anchor_edits: anchored,
      session: "s",
    });
    const pairs = [{ old_string: "x", new_string: "y" }];
    assert.deepEqual(editParams({ file_path: "a", edits: pairs }, "s"), { file_path: "a", edits: pairs, session: "s" });
    assert.match(editConfirmation({ file_path: "a", anchor_edits: anchored }).message, /replace 12ab\.\.14cd/);
    assert.match(editConfirmation({ file_path: "a", edits: pairs }).message, /in 1 place, all or none/);
    assert.deepEqual(writeParams({ file_path: "a", content: "" }, "s"), { file_path: "a", content: "", session: "s" });
  });

  it("attachments carry the mentions and the active editor's selection", () => {
    const params = attachmentsParams({ mentions: ["/ws/b.py"], types: [] }, "s", {
      file_path: "/ws/a.py",
      selection: SEL,
    });
    assert.deepEqual(params, {
      session: "s",
      mentions: ["/ws/b.py"],
      active_editor: { file_path: "/ws/a.py", selection: SEL },
    });
  });

  it("attachments take the diagnostics_offset a cut diagnostics list names", () => {
    const params = attachmentsParams({ types: ["diagnostics"], diagnostics_offset: 40 }, "s", undefined);
    assert.deepEqual(params, { session: "s", types: ["diagnostics"], diagnostics_offset: 40 });
  });

  it("describes the active editor, its selection as an LSP range", () => {
    const doc = {
      uri: fake.Uri.file("/ws/a.py"),
      languageId: "python",
      version: 7,
      getText: () => "selected",
    };
    const editor = { document: doc, selection: new fake.Range(4, 0, 5, 3) };
    assert.deepEqual(describeEditor(editor as never), {
      file_path: "/ws/a.py",
      selection: { start: { line: 4, character: 0 }, end: { line: 5, character: 3 } },
    });
    const empty = { document: doc, selection: new fake.Range(1, 1, 1, 1) };
    assert.equal(describeEditor(empty as never)?.selection, undefined);
    assert.equal(describeEditor(undefined), undefined);
  });
});

describe("parts -> the tool result", () => {
  it("image: an image part plus its sizes", () => {
    const parts = renderReadResult({
      type: "image",
      file: {
        file_path: "/ws/p.png",
        base64: Buffer.from("png-bytes").toString("base64"),
        media_type: "image/png",
        original_size: 9,
        dimensions: { original_width: 4000, original_height: 3000, display_width: 1568, display_height: 1176 },
        tokens: 2459,
        format: "PNG",
      },
    });
    assert.equal(parts[0].kind, "image");
    assert.match(textOf(parts), /4000x3000, shown at 1568x1176/);
    const result = toToolResult(parts) as unknown as fake.LanguageModelToolResult;
    const image = result.content[0] as fake.LanguageModelDataPart;
    assert.ok(image instanceof fake.LanguageModelDataPart);
    assert.equal(Buffer.from(image.data).toString(), "png-bytes");
    assert.equal(image.mimeType, "image/png");
  });

  it("image in a VS Code without LanguageModelDataPart: says so in text", (t) => {
    t.mock.method(vscodeapi, "imagePart", () => undefined);
    const result = toToolResult([{ kind: "image", base64: "", mimeType: "image/png" }]) as unknown as fake.LanguageModelToolResult;
    const part = result.content[0] as fake.LanguageModelTextPart;
    assert.match(part.value, /cannot pass to the model/);
  });
});

describe("the tools against a fake connection", () => {
  it("read sends readkeeper/read with the session and renders the result", async () => {
    const sent: [string, unknown][] = [];
    const calls: string[] = [];
    const client: RequestSender = {
      sendRequest: async <R>(method: string, params: unknown) => {
        sent.push([method, params]);
        return { type: "file_unchanged", file: { file_path: "/ws/a.py" } } as R;
      },
    };
    const tool = readTool(contextWith(client, calls));
    const result = (await tool.invoke({ input: { file_path: "a.py" }, toolInvocationToken: undefined }, token)) as unknown as fake.LanguageModelToolResult;
    assert.deepEqual(sent, [["readkeeper/read", { file_path: "a.py", session: "chat-1" }]]);
    assert.match((result.content[0] as fake.LanguageModelTextPart).value, /File unchanged/);
    assert.deepEqual(calls, ["readkeeper/read"]);
  });

  it("edit and write ask for confirmation with what will change", async () => {
    const edit = editTool(contextWith(undefined));
    const prepared = (await edit.prepareInvocation!(
      { input: { file_path: "a.py", old_string: "x = 1", new_string: "x = 2" } },
      token,
    )) as { confirmationMessages: { title: string; message: fake.MarkdownString } };
    assert.equal(prepared.confirmationMessages.title, "Edit file?");
    assert.match(prepared.confirmationMessages.message.value, /x = 1[\s\S]*x = 2/);
    const write = writeTool(contextWith(undefined));
    const preparedWrite = (await write.prepareInvocation!({ input: { file_path: "new.py", content: "a\nb" } }, token)) as {
      confirmationMessages: { title: string };
    };
    assert.equal(preparedWrite.confirmationMessages.title, "Write file?");
    assert.match(editConfirmation({ file_path: "a", old_string: "```", new_string: "" }).message, /````/);
  });

  it("a refused edit reaches the model as an error with the server's message", async () => {
    const client: RequestSender = {
      sendRequest: async () => {
        throw { code: -32803, message: "a.py changed since you read it.", data: { kind: "stale" } };
      },
    };
    const tool = editTool(contextWith(client));
    await assert.rejects(
      Promise.resolve(tool.invoke({ input: { file_path: "a.py", old_string: "a", new_string: "b" }, toolInvocationToken: undefined }, token)),
      /stale: a.py changed since you read it\./,
    );
  });

  it("says how to recover when the server is not running", async () => {
    const tool = readTool(contextWith(undefined));
    await assert.rejects(
      Promise.resolve(tool.invoke({ input: { file_path: "a.py" }, toolInvocationToken: undefined }, token)),
      /readkeeper is not running/,
    );
  });

  it("attachments sends the active editor", async () => {
    let params: unknown;
    const client: RequestSender = {
      sendRequest: async <R>(_m: string, p: unknown) => {
        params = p;
        return { attachments: [], dropped: [], used_tokens: 0, budget_tokens: 100 } as R;
      },
    };
    await attachmentsTool(contextWith(client)).invoke({ input: {}, toolInvocationToken: undefined }, token);
    assert.deepEqual(params, {
      session: "chat-1",
      active_editor: { file_path: "/ws/a.py", selection: SEL },
    });
  });

  it("grep: the session is added, and the matches come back as grep prints them", async () => {
    assert.deepEqual(grepParams({ pattern: "def \\w+", glob: "*.py", path: "", context: 2 }, "s"), {
      pattern: "def \\w+",
      glob: "*.py",
      context: 2,
      session: "s",
    });
    assert.throws(() => grepParams({ pattern: "" }, "s"), /pattern is required/);
    let sent: [string, unknown] | undefined;
    const client: RequestSender = {
      sendRequest: async <R>(method: string, params: unknown) => {
        sent = [method, params];
        return {
          matches: [
            { file_path: "/ws/a.py", line: 3, text: "def f():" },
            { file_path: "/ws/a b.py", line: 4, text: "    return 1", context: true },
          ],
          partial: true,
          note: "Showing 2 matches.",
          next: { pattern: "def", offset: 2 },
        } as R;
      },
    };
    const result = await grepTool(contextWith(client)).invoke(
      { input: { pattern: "def" }, toolInvocationToken: undefined },
      token,
    );
    assert.deepEqual(sent, ["readkeeper/grep", { pattern: "def", session: "chat-1" }]);
    const shown = (result as unknown as { content: { value: string }[] }).content.map((p) => p.value).join("");
    assert.equal(
      shown,
      '/ws/a.py:3:def f():\n"/ws/a b.py"-4-    return 1\n(Showing 2 matches.)\nnext: {"pattern":"def","offset":2}',
    );
  });

  it("registers the five tools under the names package.json declares", () => {
    const registered: string[] = [];
    mock.method(vscodeapi, "registerTool", (name: string) => {
      registered.push(name);
      return { dispose() {} };
    });
    registerTools(contextWith(undefined));
    mock.restoreAll();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pkg = require("../../package.json") as { contributes: { languageModelTools: { name: string }[] } };
    assert.deepEqual(registered, pkg.contributes.languageModelTools.map((t) => t.name));
  });
});
