// readkeeper as an MCP server for VS Code's agent modes: a stdio definition that runs
// `<python> -P -m readkeeper mcp --root <folder>...` with the interpreter that runs the
// language server. That process finds this window's server through its discovery file
// and attaches to it, so MCP tools share the editor's read-state, watcher and buffers.

import * as vscode from "vscode";
import * as vscodeapi from "../common/vscodeapi";

/** The id in package.json's `contributes.mcpServerDefinitionProviders`. */
export const MCP_PROVIDER_ID = "readkeeper.mcp";

/** The definitions for these workspace folders: none until a Python is known, and
 * none in Restricted Mode (not `trusted`): an MCP server that found no editor server to
 * attach to would run a core of its own, with git status and the user's settings on. */
export function mcpDefinitions(
  python: string | undefined,
  folders: readonly string[],
  version: string,
  trusted = true,
): vscodeapi.McpStdioDefinition[] {
  if (!python || folders.length === 0 || !trusted) {
    return [];
  }
  const roots = folders.flatMap((folder) => ["--root", folder]);
  return [{ label: "readkeeper", command: python, args: ["-P", "-m", "readkeeper", "mcp", ...roots], version }];
}

/** Registers the provider; `changed` is fired when the interpreter or folders change. */
export function registerMcpProvider(
  python: () => string | undefined,
  version: string,
  trusted: () => boolean,
): { changed: vscode.EventEmitter<void>; registration: vscode.Disposable | undefined } {
  const changed = new vscode.EventEmitter<void>();
  const registration = vscodeapi.registerMcpServerDefinitionProvider(
    MCP_PROVIDER_ID,
    async () =>
      mcpDefinitions(
        python(),
        vscodeapi.getWorkspaceFolders().map((folder) => folder.uri.fsPath),
        version,
        trusted(),
      ),
    changed.event,
  );
  return { changed, registration };
}
