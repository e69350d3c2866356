// The readkeeper output channel, optionally mirrored to a file.
//
// VS Code writes a log channel through a native module that code-server lacks, so an
// end-to-end test cannot read the channel back from the editor's logs folder. When
// $READKEEPER_TEST_OUT names a folder (the editor tests set it), every line the channel
// gets (the extension's own and the server's stderr, through vscode-languageclient) is
// appended to `readkeeper-output.log` there as well.

import * as fs from "node:fs";
import * as path from "node:path";
import type * as vscode from "vscode";

export const LOG_FILE_NAME = "readkeeper-output.log";

const LEVELS = ["trace", "debug", "info", "warn", "error"] as const;

export function logFileFor(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const folder = env.READKEEPER_TEST_OUT;
  return folder ? path.join(folder, LOG_FILE_NAME) : undefined;
}

/** `channel`, with each line also appended to `file`. A failing write never breaks the
 * channel. */
export function teeToFile(channel: vscode.LogOutputChannel, file: string): vscode.LogOutputChannel {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  } catch {
    // the appends below fail quietly too
  }
  const write = (text: string) => {
    try {
      fs.appendFileSync(file, text.endsWith("\n") ? text : `${text}\n`);
    } catch {
      // the test reading it will say what is missing
    }
  };
  return new Proxy(channel, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      if ((LEVELS as readonly (string | symbol)[]).includes(name)) {
        return (message: unknown, ...args: unknown[]) => {
          const rest = args.map((a) => (a instanceof Error ? a.message : String(a))).join(" ");
          write(`[${String(name)}] ${String(message)}${rest ? ` ${rest}` : ""}`);
          return method.call(target, message, ...args);
        };
      }
      if (name === "append" || name === "appendLine") {
        return (text: string) => {
          write(text);
          return method.call(target, text);
        };
      }
      return method.bind(target);
    },
  });
}
