// The only module that calls the `vscode` API for side effects (windows, workspace,
// languages, language models). Logic modules call these wrappers, so unit tests can
// replace them one by one (node:test's `mock.method(vscodeapi, ...)`) without an editor.

import * as vscode from "vscode";

export function createOutputChannel(name: string): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel(name, { log: true });
}

/** The remote the window is connected to ("wsl", "ssh-remote"), or undefined. */
export function remoteName(): string | undefined {
  return vscode.env.remoteName;
}

export function createStatusBarItem(id: string, priority: number): vscode.StatusBarItem {
  return vscode.window.createStatusBarItem(id, vscode.StatusBarAlignment.Right, priority);
}

export function getConfiguration(
  section: string,
  scope?: vscode.ConfigurationScope,
): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(section, scope);
}

export function onDidChangeConfiguration(
  listener: (e: vscode.ConfigurationChangeEvent) => unknown,
): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration(listener);
}

/** Whether the user trusts the workspace (false: Restricted Mode). */
export function isWorkspaceTrusted(): boolean {
  return vscode.workspace.isTrusted === true; // an editor without Workspace Trust: restricted
}

export function onDidGrantWorkspaceTrust(listener: () => unknown): vscode.Disposable {
  return vscode.workspace.onDidGrantWorkspaceTrust(listener);
}

export function getWorkspaceFolders(): readonly vscode.WorkspaceFolder[] {
  return vscode.workspace.workspaceFolders ?? [];
}

export function onDidChangeWorkspaceFolders(
  listener: (e: vscode.WorkspaceFoldersChangeEvent) => unknown,
): vscode.Disposable {
  return vscode.workspace.onDidChangeWorkspaceFolders(listener);
}

export function textDocuments(): readonly vscode.TextDocument[] {
  return vscode.workspace.textDocuments;
}

export function activeTextEditor(): vscode.TextEditor | undefined {
  return vscode.window.activeTextEditor;
}

export function registerCommand(
  command: string,
  callback: (...args: any[]) => unknown,
): vscode.Disposable {
  return vscode.commands.registerCommand(command, callback);
}

export function showErrorMessage(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(message, ...items);
}

export function showWarningMessage(
  message: string,
  ...items: string[]
): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(message, ...items);
}

export function showInformationMessage(
  message: string,
  ...items: string[]
): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(message, ...items);
}

export function setStatusBarMessage(text: string, timeoutMs: number): vscode.Disposable {
  return vscode.window.setStatusBarMessage(text, timeoutMs);
}

export function createTerminal(name: string, cwd?: string): vscode.Terminal {
  return vscode.window.createTerminal({ name, cwd });
}

export function onDidCloseTerminal(listener: (t: vscode.Terminal) => unknown): vscode.Disposable {
  return vscode.window.onDidCloseTerminal(listener);
}

export function getDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri);
}

export function getAllDiagnostics(): [vscode.Uri, vscode.Diagnostic[]][] {
  return vscode.languages.getDiagnostics();
}

export function onDidChangeDiagnostics(
  listener: (e: vscode.DiagnosticChangeEvent) => unknown,
): vscode.Disposable {
  return vscode.languages.onDidChangeDiagnostics(listener);
}

export function getExtension(id: string): vscode.Extension<unknown> | undefined {
  return vscode.extensions.getExtension(id);
}

export function registerTool<T>(name: string, tool: vscode.LanguageModelTool<T>): vscode.Disposable {
  return vscode.lm.registerTool(name, tool);
}

export function createChatParticipant(
  id: string,
  handler: vscode.ChatRequestHandler,
): vscode.ChatParticipant {
  return vscode.chat.createChatParticipant(id, handler);
}

export function selectChatModels(
  selector?: vscode.LanguageModelChatSelector,
): Thenable<vscode.LanguageModelChat[]> {
  return vscode.lm.selectChatModels(selector);
}

/** Shows a read-only document (from a TextDocumentContentProvider) as a Markdown
 * preview, or as text where the Markdown preview is missing. Never a dirty untitled
 * document. */
export async function showReadOnlyMarkdown(uri: vscode.Uri): Promise<void> {
  try {
    await vscode.commands.executeCommand("markdown.showPreview", uri);
    return;
  } catch {
    // no Markdown extension: the text itself, read-only
  }
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.languages.setTextDocumentLanguage(doc, "markdown");
  await vscode.window.showTextDocument(doc, { preview: true });
}

export function registerTextDocumentContentProvider(
  scheme: string,
  provider: vscode.TextDocumentContentProvider,
): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(scheme, provider);
}

/** Progress as a notification, cancellable. */
export function withProgress<T>(
  title: string,
  task: (
    progress: vscode.Progress<{ message?: string }>,
    token: vscode.CancellationToken,
  ) => Thenable<T>,
): Thenable<T> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    task,
  );
}

/** An image part for a tool result, where this VS Code has `LanguageModelDataPart`
 * (finalized after 1.95); undefined elsewhere, and the caller says so in text. */
export function imagePart(data: Uint8Array, mimeType: string): unknown {
  const DataPart = (vscode as unknown as Record<string, any>)["LanguageModelDataPart"];
  if (typeof DataPart?.image === "function") {
    return DataPart.image(data, mimeType);
  }
  return undefined;
}

export function executeCommand<T>(command: string, ...args: unknown[]): Thenable<T> {
  return vscode.commands.executeCommand<T>(command, ...args);
}

/** The tools VS Code knows (readkeeper's among them), as a model is offered them. */
export function lmTools(): readonly vscode.LanguageModelToolInformation[] {
  return vscode.lm.tools;
}

export function invokeTool(
  name: string,
  options: vscode.LanguageModelToolInvocationOptions<object>,
  token?: vscode.CancellationToken,
): Thenable<vscode.LanguageModelToolResult> {
  return vscode.lm.invokeTool(name, options, token);
}

/** A stdio MCP server definition for `vscode.lm.registerMcpServerDefinitionProvider`. */
export interface McpStdioDefinition {
  label: string;
  command: string;
  args: string[];
  version: string;
}

/** Registers an MCP server definition provider where this VS Code has the API
 * (`vscode.lm.registerMcpServerDefinitionProvider`, finalized after 1.95); undefined
 * elsewhere. Each definition becomes a `vscode.McpStdioServerDefinition`. */
export function registerMcpServerDefinitionProvider(
  id: string,
  provide: () => Promise<McpStdioDefinition[]>,
  onDidChange: vscode.Event<void>,
): vscode.Disposable | undefined {
  const api = vscode as unknown as Record<string, any>;
  const register = api["lm"]?.["registerMcpServerDefinitionProvider"];
  const Stdio = api["McpStdioServerDefinition"];
  if (typeof register !== "function" || typeof Stdio !== "function") {
    return undefined;
  }
  return register.call(api["lm"], id, {
    onDidChangeMcpServerDefinitions: onDidChange,
    provideMcpServerDefinitions: async () =>
      (await provide()).map((d) => new Stdio(d.label, d.command, d.args, {}, d.version)),
  }) as vscode.Disposable;
}

/** A webview panel that runs no script, opens no command link and loads no file. */
export function createWebviewPanel(viewType: string, title: string): vscode.WebviewPanel {
  return vscode.window.createWebviewPanel(viewType, title, vscode.ViewColumn.Active, {
    enableScripts: false,
    enableCommandUris: false,
    localResourceRoots: [],
  });
}
