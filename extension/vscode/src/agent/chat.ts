// The `@readkeeper` chat participant: "what changed since you read it", stats, and a
// question answered with readkeeper's budgeted attachments attached.

import * as vscode from "vscode";
import * as vscodeapi from "../common/vscodeapi";
import type { ChangesResult } from "../protocol";
import { type AttachmentsResult, type ForgetResult, Methods, type RequestSender, type Stats } from "./contract";
import { changesMarkdown, errorMessage, forgetSentence, renderAttachments, statsMarkdown } from "./render";
import { attachmentsParams, type ToolContext } from "./tools";

export type Intent = "changes" | "stats" | "context" | "forget" | "ask";

/** The request each intent makes (a question and /context both collect attachments),
 * for the message of one that fails. */
const METHOD_OF: Record<Intent, string> = {
  changes: Methods.changes,
  stats: Methods.stats,
  forget: Methods.forget,
  context: Methods.attachments,
  ask: Methods.attachments,
};

const CHANGES_RE = /\b(what|which)\b.*\bchang|\bchanged since\b|^changes\??$/i;
const STATS_RE = /^\s*(show\s+)?stats\??\s*$/i;

/** What the user asked for: a slash command wins, then the words of the prompt. */
export function intentOf(command: string | undefined, prompt: string): Intent {
  if (command === "changes" || command === "stats" || command === "context" || command === "forget") {
    return command;
  }
  if (STATS_RE.test(prompt)) return "stats";
  if (CHANGES_RE.test(prompt.trim())) return "changes";
  return "ask";
}

/** File paths of the references the user attached (#file, drag and drop). */
export function mentionedPaths(references: readonly vscode.ChatPromptReference[]): string[] {
  const paths: string[] = [];
  for (const ref of references) {
    const value = ref.value as unknown;
    if (value && typeof value === "object" && "fsPath" in value && typeof value.fsPath === "string") {
      paths.push(value.fsPath);
    } else if (value && typeof value === "object" && "uri" in value) {
      const uri = (value as { uri?: { fsPath?: unknown } }).uri;
      if (uri && typeof uri.fsPath === "string") paths.push(uri.fsPath);
    }
  }
  return paths;
}

async function request<R>(client: RequestSender, method: string, params: unknown): Promise<R> {
  return client.sendRequest<R>(method, params);
}

export function chatHandler(context: ToolContext): vscode.ChatRequestHandler {
  return async (req, _chatContext, stream, token) => {
    const client = context.client();
    if (!client) {
      stream.markdown("readkeeper is not running. Run **readkeeper: Restart Server**; its log says why it stopped.");
      return {};
    }
    const session = context.session();
    const intent = intentOf(req.command, req.prompt);
    try {
      switch (intent) {
        case "stats": {
          const stats = await request<Stats>(client, Methods.stats, { session });
          stream.markdown(statsMarkdown(stats, session));
          return { metadata: { intent } };
        }
        case "changes": {
          const result = await request<ChangesResult>(client, Methods.changes, { session });
          stream.markdown(changesMarkdown(result));
          return { metadata: { intent } };
        }
        case "forget": {
          const result = await request<ForgetResult>(client, Methods.forget, { session });
          stream.markdown(forgetSentence(result, session));
          return { metadata: { intent } };
        }
        default:
          break;
      }
      stream.progress("Collecting context…");
      const params = attachmentsParams(
        { mentions: mentionedPaths(req.references) },
        session,
        context.activeEditor(),
      );
      const attachments = await request<AttachmentsResult>(client, Methods.attachments, params);
      const contextText = renderAttachments(attachments)
        .map((p) => (p.kind === "text" ? p.text : ""))
        .join("\n");
      if (intent === "context" || req.prompt.trim() === "") {
        stream.markdown("Context readkeeper attaches to this turn:\n\n````text\n" + contextText + "\n````");
        return { metadata: { intent: "context" } };
      }
      const model = await pickModel(req);
      if (!model) {
        stream.markdown(
          "No language model is available to answer; here is the context readkeeper would attach:\n\n" +
            "````text\n" + contextText + "\n````",
        );
        return { metadata: { intent } };
      }
      const messages: vscode.LanguageModelChatMessage[] = [
        vscode.LanguageModelChatMessage.User(
          "Context from the workspace, collected by readkeeper within a token budget:\n\n" + contextText,
        ),
        vscode.LanguageModelChatMessage.User(req.prompt),
      ];
      const rounds = await runToolLoop(model, messages, req.toolInvocationToken, stream, token);
      return { metadata: { intent, rounds } };
    } catch (error) {
      const message = errorMessage(error, METHOD_OF[intent]);
      stream.markdown(`readkeeper: ${message}`);
      return { errorDetails: { message } };
    } finally {
      context.afterCall?.(intent);
    }
  };
}

/** Most model round trips of one @readkeeper request. */
export const MAX_ROUNDS = 12;

/** readkeeper's tools as offered to a model. */
export function readkeeperTools(): vscode.LanguageModelChatTool[] {
  return vscodeapi
    .lmTools()
    .filter((tool) => tool.name.startsWith("readkeeper_"))
    .map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));
}

/** A small agent loop: the model may call readkeeper's tools, which run through VS Code
 * (`vscode.lm.invokeTool` with the request's token, so edits and writes get VS Code's
 * confirmation in the chat), and their results go back to the model. Returns the
 * number of model round trips. */
export async function runToolLoop(
  model: vscode.LanguageModelChat,
  messages: vscode.LanguageModelChatMessage[],
  toolInvocationToken: vscode.ChatParticipantToolToken | undefined,
  stream: Pick<vscode.ChatResponseStream, "markdown">,
  token: vscode.CancellationToken,
): Promise<number> {
  const tools = readkeeperTools();
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    const response = await model.sendRequest(messages, { tools }, token);
    const calls: vscode.LanguageModelToolCallPart[] = [];
    const said: vscode.LanguageModelTextPart[] = [];
    for await (const part of response.stream) {
      if (part instanceof vscode.LanguageModelTextPart) {
        stream.markdown(part.value);
        said.push(part);
      } else if (part instanceof vscode.LanguageModelToolCallPart) {
        calls.push(part);
      }
    }
    if (calls.length === 0 || token.isCancellationRequested) {
      return round;
    }
    messages.push(vscode.LanguageModelChatMessage.Assistant([...said, ...calls]));
    for (const call of calls) {
      let content: unknown[];
      try {
        const result = await vscodeapi.invokeTool(call.name, { input: call.input, toolInvocationToken }, token);
        content = result.content;
      } catch (error) {
        content = [new vscode.LanguageModelTextPart(`Error: ${errorMessage(error, call.name)}`)];
      }
      messages.push(
        vscode.LanguageModelChatMessage.User([
          new vscode.LanguageModelToolResultPart(call.callId, content as vscode.LanguageModelTextPart[]),
        ]),
      );
    }
  }
  stream.markdown(`\n\n_(stopped after ${MAX_ROUNDS} rounds of tool calls)_`);
  return MAX_ROUNDS;
}

async function pickModel(req: vscode.ChatRequest): Promise<vscode.LanguageModelChat | undefined> {
  const fromRequest = (req as { model?: vscode.LanguageModelChat }).model;
  if (fromRequest) {
    return fromRequest;
  }
  const models = await vscodeapi.selectChatModels();
  return models[0];
}

export function registerChatParticipant(context: ToolContext, extensionUri?: vscode.Uri): vscode.Disposable {
  const participant = vscodeapi.createChatParticipant("readkeeper.chat", chatHandler(context));
  if (extensionUri) {
    participant.iconPath = new vscode.ThemeIcon("eye");
  }
  return participant;
}
