// Starts, stops and restarts the readkeeper language server (`<python> -m readkeeper
// serve`, stdio) with vscode-languageclient. Every start/stop/restart runs in one queue,
// so a restart requested while one is in progress waits instead of racing it.

import type * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";
import { AGENT_TOOLS } from "../agent/contract";
import type { Problem, Resolution } from "./resolution";
import { describeSource, safeEnv, serverCommand } from "./python";
import { SECTION, serverSettings } from "./settings";
import * as vscodeapi from "./vscodeapi";

export type ServerState = "stopped" | "starting" | "running" | "error";

export interface ServerHooks {
  log: vscode.LogOutputChannel;
  /** Finds the Python that runs the server: the setting, an interpreter that already has
   * readkeeper, or the private environment (set up or upgraded on the way). */
  resolve(): Promise<Resolution>;
  /** Tells the user what is missing and what to do (an error message with buttons). */
  onProblem(problem: Problem): void;
  /** A warning worth showing although the server starts (an older readkeeper...). */
  onNote?(note: string): void;
  onStateChange(state: ServerState, detail?: string): void;
  /** The client is running: register notification handlers, forward diagnostics. */
  onStarted(client: LanguageClient): void;
  onStopping(): void;
  /** Makes the client (tests pass a fake). */
  createClient?: (serverOptions: ServerOptions, clientOptions: LanguageClientOptions) => LanguageClient;
}

export function newLanguageClient(
  serverOptions: ServerOptions,
  clientOptions: LanguageClientOptions,
): LanguageClient {
  return new LanguageClient("readkeeper", "readkeeper", serverOptions, clientOptions);
}

export class ReadkeeperServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private queue: Promise<void> = Promise.resolve();
  private pendingRestart = false;
  state: ServerState = "stopped";
  /** What the state is about ("readkeeper not installed", ...), or "". */
  detail = "";
  /** The interpreter that runs the server, once resolved (the MCP definition uses it). */
  pythonCommand: string | undefined;
  /** Whether the running server was started for a trusted workspace (false: restricted
   * mode, which the server holds until it is started again). */
  trusted = false;

  constructor(private readonly hooks: ServerHooks) {}

  get running(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  private setState(state: ServerState, detail?: string): void {
    this.state = state;
    this.detail = detail ?? "";
    this.hooks.onStateChange(state, detail);
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  /** Restarts the server; requests made while one restart is queued share it. */
  restart(): Promise<void> {
    if (this.pendingRestart) {
      return this.queue;
    }
    this.pendingRestart = true;
    return this.enqueue(async () => {
      this.pendingRestart = false;
      await this.doStop();
      await this.doStart();
    });
  }

  private async doStart(): Promise<void> {
    if (this.client) {
      return;
    }
    const { log } = this.hooks;
    this.setState("starting");
    let resolution: Resolution;
    try {
      resolution = await this.hooks.resolve();
    } catch (error) {
      const message = `readkeeper could not find or set up a Python to run its server: ${String(error)}`;
      log.error(message);
      this.setState("error", "no Python to run the server; see the log");
      this.hooks.onProblem({ message, status: "no Python", actions: ["Retry", "Show Log"] });
      return;
    }
    if (!resolution.ok) {
      log.error(resolution.problem.message);
      this.setState("error", resolution.problem.status);
      this.hooks.onProblem(resolution.problem);
      return;
    }
    const python = resolution.python;
    this.pythonCommand = python.command;
    log.info(
      `readkeeper ${resolution.version} with ${python.command} (${describeSource(python.source)}, ${resolution.how})`,
    );
    if (resolution.note) {
      log.warn(resolution.note);
      this.hooks.onNote?.(resolution.note);
    }

    const folders = vscodeapi.getWorkspaceFolders();
    // Fixed for this process: trust granted later restarts the server (extension.ts).
    const trusted = vscodeapi.isWorkspaceTrusted();
    this.trusted = trusted;
    if (!trusted) {
      log.info(
        "restricted mode (the workspace is not trusted): git status, allowed paths and the " +
          "settings that name a program are off until you trust it",
      );
    }
    const { command, args } = serverCommand(python.command);
    const serverOptions: ServerOptions = {
      command,
      args,
      options: { cwd: folders[0]?.uri.fsPath, env: safeEnv(process.env) },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file: the server tracks open buffers so reads see unsaved changes.
      documentSelector: [{ scheme: "file" }],
      outputChannel: log,
      traceOutputChannel: log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // The chat agent's tools: the server's next steps name them (contract.ts).
      initializationOptions: {
        ...serverSettings(vscodeapi.getConfiguration(SECTION), trusted),
        trusted,
        agent_tools: AGENT_TOOLS,
      },
      middleware: {
        workspace: {
          // Answer `workspace/configuration` for our section with the server's keys only
          // (snake_case), not the extension's own settings.
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) {
              return answers;
            }
            return params.items.map((item, i) =>
              item.section === SECTION
                ? serverSettings(vscodeapi.getConfiguration(SECTION), trusted)
                : answers[i],
            );
          },
        },
      },
    };
    const client = (this.hooks.createClient ?? newLanguageClient)(serverOptions, clientOptions);
    client.onDidChangeState((e) => {
      if (this.client !== client) {
        return;
      }
      if (e.newState === State.Stopped && this.state === "running") {
        this.setState("error", "the server stopped; see the log");
      } else if (e.newState === State.Running && this.state !== "running") {
        this.setState("running");
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      log.error(`readkeeper failed to start: ${String(error)}`);
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      this.setState("error", "failed to start; see the log");
      return;
    }
    if (this.state !== "running") this.setState("running"); // the state listener may have said so
    this.hooks.onStarted(client);
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    if (!client) {
      this.setState("stopped");
      return;
    }
    this.hooks.onStopping();
    this.client = undefined;
    try {
      if (client.state === State.Running || client.state === State.Starting) {
        await client.stop(5000);
      }
    } catch (error) {
      this.hooks.log.warn(`stopping readkeeper: ${String(error)}`);
    }
    await client.dispose().catch(() => undefined);
    this.setState("stopped");
  }

  /** Pushes changed server settings to the running server. */
  pushSettings(): void {
    const client = this.running;
    if (!client) {
      return;
    }
    const settings = serverSettings(vscodeapi.getConfiguration(SECTION), this.trusted);
    void client
      .sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: settings } })
      .catch((error: unknown) => this.hooks.log.warn(`sending settings: ${String(error)}`));
  }

  async dispose(): Promise<void> {
    await this.stop();
  }
}
