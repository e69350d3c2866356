import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import * as fake from "../fakeVscode";
import type { ReadResult, RequestSender } from "../../src/protocol";
import {
  attachmentsParams,
  attachmentsTool,
  describeEditor,
  editConfirmation,
  editParams,
  editTool,
  errorMessage,
  type Part,
  readParams,
  readTool,
  registerTools,
  renderAttachments,
  withoutDuplicates,
  renderEditResult,
  renderReadResult,
  toToolResult,
  type ToolContext,
  UNCHANGED_NOTE,
  writeParams,
  writeTool,
} from "../../src/tools";
import * as vscodeapi from "../../src/vscodeapi";

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

  it("edit and write keep every field the protocol names", () => {
    assert.deepEqual(editParams({ file_path: "a", old_string: "x", new_string: "y", replace_all: true }, "s"), {
      file_path: "a",
      old_string: "x",
      new_string: "y",
      replace_all: true,
      session: "s",
    });
    // An empty new_string deletes: it must not be dropped as "absent".
    assert.equal(editParams({ file_path: "a", old_string: "x", new_string: "" }, "s").new_string, "");
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

describe("results -> tool result parts", () => {
  it("text: the cat -n content, with how to continue when partial", () => {
    const result: ReadResult = {
      type: "text",
      file: {
        file_path: "/ws/a.py",
        content: "     1\tone\n     2\ttwo",
        start_line: 1,
        num_lines: 2,
        total_lines: 10,
        tokens: 4,
        partial: true,
        next_offset: 3,
      },
    };
    const text = textOf(renderReadResult(result));
    assert.ok(text.startsWith("     1\tone\n     2\ttwo"));
    assert.match(text, /Showing lines 1-2 of 10; continue with offset: 3/);
  });

  it("text: unsaved buffers are flagged", () => {
    const text = textOf(
      renderReadResult({
        type: "text",
        file: {
          file_path: "/ws/a.py",
          content: "     1\tx",
          start_line: 1,
          num_lines: 1,
          total_lines: 1,
          tokens: 1,
          unsaved: true,
          buffer_version: 4,
        },
      }),
    );
    assert.match(text, /Unsaved editor buffer \(version 4\)/);
  });

  it("file_unchanged: a stub that tells the model how to get the content back", () => {
    const text = textOf(renderReadResult({ type: "file_unchanged", file: { file_path: "/ws/a.py" } }));
    assert.ok(text.startsWith(UNCHANGED_NOTE));
    assert.match(text, /force: true/);
    assert.ok(text.length < 300);
  });

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

  it("pdf, notebook and parts render as text with how to continue", () => {
    const pdf = textOf(
      renderReadResult({
        type: "pdf",
        file: { file_path: "/ws/d.pdf", content: "--- page 1 ---\nHello", page_count: 30, pages: "1-20", tokens: 5, partial: true, next_pages: "21-30" },
      }),
    );
    assert.match(pdf, /--- page 1 ---/);
    assert.match(pdf, /Continue with pages: "21-30"/);
    const nb = renderReadResult({
      type: "notebook",
      file: {
        file_path: "/ws/n.ipynb",
        total_cells: 1,
        cells: [
          {
            cell_id: "c1",
            index: 0,
            cell_type: "code",
            source: "print(1)",
            execution_count: 1,
            outputs: [
              { output_type: "stream", name: "stdout", text: "1\n" },
              { output_type: "display_data", images: [{ media_type: "image/png", base64: "AAAA" }] },
            ],
          },
        ],
      },
    });
    assert.match(textOf(nb), /<cell id="c1" index=0 type=code execution_count=1>\nprint\(1\)/);
    assert.ok(nb.some((p) => p.kind === "image"));
    const parts = textOf(
      renderReadResult({
        type: "parts",
        file: { file_path: "/ws/d.pdf", count: 1, output_dir: "/tmp/x", pages: ["/tmp/x/page-1.png"], page_numbers: [1], page_count: 3 },
      }),
    );
    assert.match(parts, /page 1: \/tmp\/x\/page-1.png/);
  });

  it("edit and attachments results", () => {
    const edit = textOf(
      renderEditResult({
        file_path: "/ws/a.py",
        replacements: 1,
        snippet: "     3\tnew",
        merged: true,
        external_change: { diff: "@@ -9 +9 @@\n-a\n+b", truncated: false, lines: [9, 9] },
        read_state: { digest: "abc" },
      }),
    );
    assert.match(edit, /Edited \/ws\/a.py: 1 replacement\.\n     3\tnew/);
    assert.match(edit, /both changes are kept\.\nWhat had changed:\n@@ -9 \+9 @@/);
    assert.doesNotMatch(edit, /digest/);
    const att = textOf(
      renderAttachments({
        attachments: [{ type: "diagnostics", priority: 2, tokens: 12, content: "a.py:3 error", truncated: true }],
        dropped: [{ type: "git_status", reason: "budget" }],
        used_tokens: 12,
        budget_tokens: 100,
      }),
    );
    assert.match(att, /<attachment type="diagnostics" priority=2 tokens=12 truncated>\na.py:3 error\n<\/attachment>/);
    assert.match(att, /12 of 100 tokens; dropped: .*git_status/);
  });

  it("attaches a memory file the user also attached once, as the file", () => {
    const result = {
      attachments: [
        { type: "file", priority: 100, tokens: 30, content: "     1\t# Agents", truncated: false, source: "/ws/AGENTS.md" },
        { type: "memory", priority: 60, tokens: 20, content: "# Agents", truncated: false, source: "/ws/AGENTS.md" },
        { type: "memory", priority: 60, tokens: 5, content: "# Claude", truncated: false, source: "/ws/CLAUDE.md" },
      ],
      dropped: [],
      used_tokens: 55,
      budget_tokens: 100,
    };
    const deduped = withoutDuplicates(result);
    assert.deepEqual(
      deduped.attachments.map((a) => `${a.type} ${a.source}`),
      ["file /ws/AGENTS.md", "memory /ws/CLAUDE.md"],
    );
    assert.equal(deduped.used_tokens, 35);
    const shown = textOf(renderAttachments(result));
    assert.equal(shown.match(/AGENTS\.md/g)?.length, 1, shown);
    assert.match(shown, /<attachment type="file" source="\/ws\/AGENTS.md" priority=100 tokens=30>/);
    assert.match(shown, /\[2 attachment\(s\), 35 of 100 tokens\]/);
  });

  it("errors: the server's message, its kind and suggestions; unknown methods", () => {
    const notFound = { code: -32803, message: "No such file: src/ap.py.", data: { kind: "not_found", suggestions: ["src/app.py"] } };
    assert.equal(errorMessage(notFound, "readkeeper/read"), "not_found: No such file: src/ap.py.\nDid you mean: src/app.py");
    const stale = { code: -32803, message: "Changed since read.", data: { kind: "stale", diff: "@@ -1 +1 @@" } };
    assert.match(errorMessage(stale, "readkeeper/edit"), /stale: Changed since read\.\n@@ -1 \+1 @@/);
    assert.match(errorMessage({ code: -32601, message: "Method Not Found" }, "readkeeper/edit"), /does not support readkeeper\/edit/);
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

  it("registers the four tools under the names package.json declares", () => {
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
