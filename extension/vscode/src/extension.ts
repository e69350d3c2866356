// Wires the pieces together: the plumbing in common/ (log, status bar, the server's
// Python and lifecycle, settings) and the agent's parts in agent/ (the chat panel's
// tools, the @readkeeper participant, diagnostics forwarding, the MCP definition), plus
// the commands and change notices. common/ never imports agent/.

import { unsupportedPlatform } from "./common/platform";
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { registerChatParticipant } from "./agent/chat";
import { type ForgetResult, Methods, type Stats } from "./agent/contract";
import { DiagnosticsForwarder, type DiagnosticsSource } from "./agent/diagnostics";
import { registerMcpProvider } from "./agent/mcp";
import { SessionPanel } from "./agent/sessionPanel";
import { changeNoticeSummary, errorMessage, forgetSentence, statsMarkdown } from "./agent/render";
import { describeEditor, registerTools, type ToolContext } from "./agent/tools";
import { resolveServerPython } from "./common/environment";
import { logFileFor, teeToFile } from "./common/log";
import { findBundledWheel, removeEnvironment } from "./common/privateEnv";
import { onPythonInterpreterChange, PYTHON_EXTENSION_ID, pythonExtensionInterpreter, shellQuote } from "./common/python";
import type { Problem, WithProgress } from "./common/resolution";
import { ReadkeeperServer } from "./common/server";
import { affectsServer, extensionSettings, needsRestart, SECTION } from "./common/settings";
import { stateSentence, STATS_SCHEME, StatsDocument, StatusBar } from "./common/status";
import * as vscodeapi from "./common/vscodeapi";
import type { DidChangeReadFilesParams } from "./protocol";

/** What other extensions (a chat plugin, the tests) get from `activate`. */
export interface ReadkeeperApi {
  state(): string;
  request<R>(method: string, params: unknown): Promise<R>;
  session(): string;
}

export async function activate(context: vscode.ExtensionContext): Promise<ReadkeeperApi> {
  const channel = vscodeapi.createOutputChannel("readkeeper");
  const logFile = logFileFor();
  const log = logFile ? teeToFile(channel, logFile) : channel;
  const status = new StatusBar();
  const sessionPanel = new SessionPanel();
  const statsDocument = new StatsDocument();
  const settings = () => extensionSettings(vscodeapi.getConfiguration(SECTION));
  const firstFolder = () => vscodeapi.getWorkspaceFolders()[0];
  let forwarder: DiagnosticsForwarder | undefined;
  let mcpChanged = () => {};
  let statsTimer: NodeJS.Timeout | undefined;

  const diagnosticsSource: DiagnosticsSource = {
    get: (uri) => vscodeapi.getDiagnostics(uri),
    all: () => vscodeapi.getAllDiagnostics(),
    version: (uri) =>
      vscodeapi.textDocuments().find((d) => d.uri.toString() === uri.toString())?.version,
    onDidChange: (listener) => vscodeapi.onDidChangeDiagnostics((e) => listener(e.uris)),
  };

  const refreshStats = async () => {
    const client = server.running;
    if (!client) return;
    try {
      const stats = await client.sendRequest<Stats>(Methods.stats, { session: settings().chatSession });
      status.setStats(statsMarkdown(stats, settings().chatSession));
    } catch (error) {
      log.debug(`stats: ${String(error)}`);
    }
  };
  const scheduleStats = () => {
    if (statsTimer) clearTimeout(statsTimer);
    statsTimer = setTimeout(() => void refreshStats(), 500);
  };

  const openInterpreterSetting = () =>
    vscodeapi.executeCommand("workbench.action.openSettings", `${SECTION}.interpreter`);

  /** What is missing and what to do, with a button for each next step. */
  const showProblem = async (problem: Problem) => {
    const choice = await vscodeapi.showErrorMessage(problem.message, ...problem.actions);
    if (choice === "Install" && problem.installCommand) {
      const terminal = vscodeapi.createTerminal("readkeeper: install", firstFolder()?.uri.fsPath);
      terminal.show();
      terminal.sendText(shellQuote(problem.installCommand) + " && exit");
      const closed = vscodeapi.onDidCloseTerminal((t) => {
        if (t === terminal) {
          closed.dispose();
          void server.restart();
        }
      });
      context.subscriptions.push(closed);
    } else if (choice === "Open Setting") {
      await openInterpreterSetting();
    } else if (choice === "Select Interpreter") {
      if (vscodeapi.getExtension(PYTHON_EXTENSION_ID)) {
        await vscodeapi.executeCommand("python.setInterpreter");
      } else {
        await openInterpreterSetting();
      }
    } else if (choice === "Retry") {
      void server.restart();
    } else if (choice === "Show Log") {
      log.show();
    }
  };

  const withProgress: WithProgress = async (title, task) => {
    status.setState("starting", "setting up its Python environment (see the notification)");
    return await vscodeapi.withProgress(title, (progress, token) => {
      const abort = new AbortController();
      const cancelled = token.onCancellationRequested(() => abort.abort());
      return task((message) => progress.report({ message }), abort.signal).finally(() => cancelled.dispose());
    });
  };

  /** (Re)starts diagnostics forwarding with the current settings. */
  const startForwarding = (client: LanguageClient) => {
    forwarder?.dispose();
    forwarder = undefined;
    const s = settings();
    if (s.diagnosticsForward) {
      forwarder = new DiagnosticsForwarder(
        (params) => client.sendNotification(Methods.didChangeDiagnostics, params),
        diagnosticsSource,
        { debounceMs: s.diagnosticsDebounceMs, maxPerFile: s.diagnosticsMaxPerFile },
      );
      forwarder.start();
    }
  };

  const onStarted = (client: LanguageClient) => {
    client.onNotification(Methods.didChangeReadFiles, (params: DidChangeReadFilesParams) => {
      const { count, lines } = changeNoticeSummary(params);
      log.info(`files the agent read changed since: ${lines.join(", ")}`);
      if (settings().showChangeNotices) status.flashChanges(count);
      scheduleStats();
    });
    startForwarding(client);
    scheduleStats();
  };

  const server = new ReadkeeperServer({
    log,
    resolve: () =>
      resolveServerPython({
        setting: settings().interpreter,
        workspaceFolder: firstFolder()?.uri.fsPath,
        trusted: vscodeapi.isWorkspaceTrusted(),
        workspaceFolders: vscodeapi.getWorkspaceFolders().map((f) => f.uri.fsPath),
        pythonExtension: () => pythonExtensionInterpreter(vscodeapi.getExtension, firstFolder()?.uri),
        storageDir: context.globalStorageUri.fsPath,
        extensionVersion: String((context.extension.packageJSON as { version?: unknown }).version ?? "0"),
        bundled: findBundledWheel(context.extensionPath),
        log,
        withProgress,
      }),
    onProblem: (problem) => void showProblem(problem),
    onNote: (note) =>
      void vscodeapi.showWarningMessage(note, "Show Log").then((choice) => choice && log.show()),
    onStateChange: (state, detail) => {
      status.setState(state, detail);
      log.info(`server ${state}${detail ? `: ${detail}` : ""}`);
      if (state === "running") mcpChanged(); // the interpreter may be new
    },
    onStarted,
    onStopping: () => {
      forwarder?.dispose();
      forwarder = undefined;
    },
  });

  activeServer = server;

  const toolContext: ToolContext = {
    client: () => server.running,
    session: () => settings().chatSession,
    activeEditor: () => describeEditor(vscodeapi.activeTextEditor()),
    afterCall: scheduleStats,
  };

  context.subscriptions.push(
    log,
    status,
    statsDocument,
    vscodeapi.registerTextDocumentContentProvider(STATS_SCHEME, statsDocument),
    { dispose: () => void server.dispose() },
    { dispose: () => forwarder?.dispose() },
    { dispose: () => statsTimer && clearTimeout(statsTimer) },
    vscodeapi.registerCommand("readkeeper.restart", () => server.restart()),
    vscodeapi.registerCommand("readkeeper.showLog", () => log.show()),
    vscodeapi.registerCommand("readkeeper.showStats", async () => {
      const client = server.running;
      if (!client) {
        const choice = await vscodeapi.showWarningMessage(stateSentence(server.state, server.detail), "Show Log");
        if (choice) log.show();
        return;
      }
      const session = settings().chatSession;
      const stats = await requestOrSay<Stats>(client, Methods.stats, { session });
      if (!stats) return;
      const markdown = statsMarkdown(stats, session);
      status.setStats(markdown);
      statsDocument.set(markdown);
      log.info(`stats: ${JSON.stringify(stats)}`);
      await vscodeapi.showReadOnlyMarkdown(statsDocument.uri);
    }),
    sessionPanel,
    vscodeapi.registerCommand("readkeeper.showSessionChart", async () => {
      const client = server.running;
      if (!client) {
        void vscodeapi.showWarningMessage(stateSentence(server.state, server.detail));
        return;
      }
      const stats = await requestOrSay<{ history?: unknown }>(client, Methods.stats, { history: true });
      if (stats) sessionPanel.show(stats);
    }),
    vscodeapi.registerCommand("readkeeper.forget", async () => {
      const client = server.running;
      if (!client) {
        void vscodeapi.showWarningMessage(stateSentence(server.state, server.detail));
        return;
      }
      const session = settings().chatSession;
      const result = await requestOrSay<ForgetResult>(client, Methods.forget, { session });
      if (!result) return;
      void vscodeapi.showInformationMessage(forgetSentence(result, session));
      scheduleStats();
    }),
    vscodeapi.registerCommand("readkeeper.resetEnvironment", async () => {
      await server.stop();
      const removed = removeEnvironment(context.globalStorageUri.fsPath);
      log.info(`removed readkeeper's Python environment ${removed}; setting it up again`);
      await server.start();
    }),
    vscodeapi.onDidChangeConfiguration((event) => {
      if (needsRestart(event)) {
        log.info("interpreter setting changed: restarting");
        void server.restart();
      } else if (event.affectsConfiguration(`${SECTION}.diagnostics`)) {
        const client = server.running;
        if (client) startForwarding(client);
      } else if (affectsServer(event)) {
        server.pushSettings();
      }
    }),
    vscodeapi.onDidChangeWorkspaceFolders(() => {
      if (server.state === "stopped" && firstFolder()) void server.start();
    }),
    // The server holds restricted mode for its life: a new one gets the trusted start.
    vscodeapi.onDidGrantWorkspaceTrust(() => {
      log.info("workspace trusted: restarting the server with git status and your settings on");
      if (firstFolder()) void server.restart();
    }),
  );

  try {
    context.subscriptions.push(...registerTools(toolContext));
    context.subscriptions.push(registerChatParticipant(toolContext, context.extensionUri));
  } catch (error) {
    // An editor without the language model / chat API still gets the server.
    log.warn(`chat tools not registered: ${String(error)}`);
  }

  // Any agent mode that takes MCP tools gets readkeeper, attached to this server.
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? "0");
  const mcp = registerMcpProvider(() => server.pythonCommand, version, () => server.trusted);
  context.subscriptions.push(mcp.changed);
  if (mcp.registration) {
    context.subscriptions.push(
      mcp.registration,
      vscodeapi.onDidChangeWorkspaceFolders(() => mcp.changed.fire()),
    );
    mcpChanged = () => mcp.changed.fire();
  }

  void onPythonInterpreterChange(vscodeapi.getExtension, () => {
    if (!settings().interpreter) {
      log.info("Python interpreter changed: restarting");
      void server.restart();
    }
  })
    .then((d) => d && context.subscriptions.push(d))
    .catch((error: unknown) => log.warn(`Python extension: ${String(error)}`));

  const unsupported = unsupportedPlatform(process.platform, vscodeapi.remoteName());
  if (unsupported) {
    log.error(unsupported);
    status.setState("stopped", "runs under WSL on Windows");
    void vscodeapi.showErrorMessage(unsupported);
  } else if (firstFolder()) {
    void server.start();
  } else {
    status.setState("stopped", "open a folder to start readkeeper");
  }

  return {
    state: () => server.state,
    session: () => settings().chatSession,
    request: async <R>(method: string, params: unknown): Promise<R> => {
      const client = server.running;
      if (!client) throw new Error(stateSentence(server.state, server.detail));
      return client.sendRequest<R>(method, params);
    },
  };
}

let activeServer: ReadkeeperServer | undefined;

/** VS Code waits for this promise: the server gets its shutdown/exit, not a kill. */
export function deactivate(): Promise<void> | undefined {
  return activeServer?.stop();
}

/** A command's request to the server: its result, or undefined once the user has been
 * shown why it failed. */
async function requestOrSay<T>(client: LanguageClient, method: string, params: object): Promise<T | undefined> {
  try {
    return await client.sendRequest<T>(method, params);
  } catch (error) {
    void vscodeapi.showErrorMessage(errorMessage(error, method));
    return undefined;
  }
}
