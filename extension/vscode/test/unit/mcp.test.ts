import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { MCP_PROVIDER_ID, mcpDefinitions } from "../../src/agent/mcp";

describe("MCP server definition", () => {
  it("runs `python -P -m readkeeper mcp` (no workspace module on sys.path) with every workspace folder as a root", () => {
    assert.deepEqual(mcpDefinitions("/venv/bin/python", ["/work/a", "/work/b"], "0.1.0"), [
      {
        label: "readkeeper",
        command: "/venv/bin/python",
        args: ["-P", "-m", "readkeeper", "mcp", "--root", "/work/a", "--root", "/work/b"],
        version: "0.1.0",
      },
    ]);
  });

  it("offers nothing in Restricted Mode (a standalone core would have git status on)", () => {
    assert.deepEqual(mcpDefinitions("/venv/bin/python", ["/work/a"], "0.1.0", false), []);
  });

  it("offers nothing until an interpreter is known or a folder is open", () => {
    assert.deepEqual(mcpDefinitions(undefined, ["/work/a"], "0.1.0"), []);
    assert.deepEqual(mcpDefinitions("python3", [], "0.1.0"), []);
  });

  it("is the provider package.json contributes", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "..", "package.json"), "utf8"));
    const ids = manifest.contributes.mcpServerDefinitionProviders.map((p: { id: string }) => p.id);
    assert.deepEqual(ids, [MCP_PROVIDER_ID]);
  });
});
