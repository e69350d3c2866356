// Wires the pieces together: log, status bar, server lifecycle, commands, diagnostics
// forwarding, change notices, the chat panel's tools and the @readkeeper participant.

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { registerChatParticipant } from "./chat";
import { DiagnosticsForwarder, type DiagnosticsSource } from "./diagnostics";
import { Methods } from "./protocol";
import {
  chooseInterpreter,
  type ImportCheck,
  importProblemMessage,
  installCommand,
  type Interpreter,
  onPythonInterpreterChange,
  PYTHON_EXTENSION_ID,
  pythonExtensionInterpreter,
  shellQuote,
} from "./python";
import { ReadkeeperServer } from "./server";
import { affectsServer, extensionSettings, needsRestart, SECTION } from "./settings";
import { changeNoticeSummary, statsMarkdown, StatusBar, type Stats } from "./status";
import { describeEditor, registerTools, type ToolContext } from "./tools";
import * as vscodeapi from "./vscodeapi";

/** What other extensions (a chat plugin, the tests) get from `activate`. */
export interface ReadkeeperApi {
  state(): string;
  request<R>(method: string, params: unknown): Promise<R>;
  session(): string;
}

export async function activate(context: vscode.ExtensionContext): Promise<ReadkeeperApi> {
  const log = vscodeapi.createOutputChannel("readkeeper");
  const status = new StatusBar();
  const settings = () => extensionSettings(vscodeapi.getConfiguration(SECTION));
  const firstFolder = () => vscodeapi.getWorkspaceFolders()[0];
  let forwarder: DiagnosticsForwarder | undefined;
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

  const offerInstall = async (python: Interpreter, check: ImportCheck) => {
    const message = importProblemMessage(python, check);
    const actions = check.ok || check.reason === "no_python" ? [] : ["Install"];
    const choice = await vscodeapi.showErrorMessage(message, ...actions, "Choose Interpreter", "Show Log");
    if (choice === "Install") {
      const terminal = vscodeapi.createTerminal("readkeeper: install", firstFolder()?.uri.fsPath);
      terminal.show();
      terminal.sendText(shellQuote(installCommand(python.command)) + " && exit");
      const closed = vscodeapi.onDidCloseTerminal((t) => {
        if (t === terminal) {
          closed.dispose();
          void server.restart();
        }
      });
      context.subscriptions.push(closed);
    } else if (choice === "Choose Interpreter") {
      if (vscodeapi.getExtension(PYTHON_EXTENSION_ID)) {
        await vscodeapi.executeCommand("python.setInterpreter");
      } else {
        await vscodeapi.executeCommand("workbench.action.openSettings", `${SECTION}.interpreter`);
      }
    } else if (choice === "Show Log") {
      log.show();
    }
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
    client.onNotification(Methods.didChangeReadFiles, (params: unknown) => {
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
    interpreter: () =>
      chooseInterpreter({
        setting: settings().interpreter,
        workspaceFolder: firstFolder()?.uri.fsPath,
        pythonExtension: () => pythonExtensionInterpreter(vscodeapi.getExtension, firstFolder()?.uri),
      }),
    onNotImportable: (python, check) => void offerInstall(python, check),
    onStateChange: (state, detail) => {
      status.setState(state, detail);
      log.info(`server ${state}${detail ? `: ${detail}` : ""}`);
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
    { dispose: () => void server.dispose() },
    { dispose: () => forwarder?.dispose() },
    { dispose: () => statsTimer && clearTimeout(statsTimer) },
    vscodeapi.registerCommand("readkeeper.restart", () => server.restart()),
    vscodeapi.registerCommand("readkeeper.showLog", () => log.show()),
    vscodeapi.registerCommand("readkeeper.showStats", async () => {
      const client = server.running;
      if (!client) {
        void vscodeapi.showWarningMessage(`readkeeper is ${server.state}.`, "Show Log");
        return;
      }
      const session = settings().chatSession;
      const stats = await client.sendRequest<Stats>(Methods.stats, { session });
      const markdown = statsMarkdown(stats, session);
      status.setStats(markdown);
      log.info(`stats: ${JSON.stringify(stats)}`);
      await vscodeapi.openMarkdownPreview(markdown);
    }),
    vscodeapi.registerCommand("readkeeper.forget", async () => {
      const client = server.running;
      if (!client) {
        void vscodeapi.showWarningMessage(`readkeeper is ${server.state}.`);
        return;
      }
      const session = settings().chatSession;
      const result = await client.sendRequest<{ forgotten?: number }>(Methods.forget, { session });
      void vscodeapi.showInformationMessage(
        `readkeeper forgot ${result.forgotten ?? 0} file(s) read in session "${session}".`,
      );
      scheduleStats();
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
  );

  try {
    context.subscriptions.push(...registerTools(toolContext));
    context.subscriptions.push(registerChatParticipant(toolContext, context.extensionUri));
  } catch (error) {
    // An editor without the language model / chat API still gets the server.
    log.warn(`chat tools not registered: ${String(error)}`);
  }

  void onPythonInterpreterChange(vscodeapi.getExtension, () => {
    if (!settings().interpreter) {
      log.info("Python interpreter changed: restarting");
      void server.restart();
    }
  })
    .then((d) => d && context.subscriptions.push(d))
    .catch((error: unknown) => log.warn(`Python extension: ${String(error)}`));

  if (firstFolder()) {
    void server.start();
  } else {
    status.setState("stopped", "open a folder to start readkeeper");
  }

  return {
    state: () => server.state,
    session: () => settings().chatSession,
    request: async <R>(method: string, params: unknown): Promise<R> => {
      const client = server.running;
      if (!client) throw new Error(`readkeeper is ${server.state}`);
      return client.sendRequest<R>(method, params);
    },
  };
}

let activeServer: ReadkeeperServer | undefined;

/** VS Code waits for this promise: the server gets its shutdown/exit, not a kill. */
export function deactivate(): Promise<void> | undefined {
  return activeServer?.stop();
}
