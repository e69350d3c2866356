// Settings: the server's own settings (the "Server" section of package.json, generated
// from server/settings.py by scripts/sync_settings.py) and the extension's.

import type * as vscode from "vscode";
import pkg from "../../package.json";

export const SECTION = "readkeeper";

interface ConfigurationSection {
  title: string;
  properties: Record<string, unknown>;
}

function sectionKeys(title: string): string[] {
  const sections = pkg.contributes.configuration as ConfigurationSection[];
  const section = sections.find((s) => s.title === title);
  return Object.keys(section?.properties ?? {}).map((key) => key.slice(SECTION.length + 1));
}

/** camelCase keys (without `readkeeper.`) of the settings the server reads. */
export const SERVER_SETTING_KEYS: readonly string[] = sectionKeys("Server");

export function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
}

/** Reads settings like `WorkspaceConfiguration.get`. */
export interface SettingsReader {
  get<T>(key: string): T | undefined;
}

/** The server's settings as it takes them (snake_case), for `initializationOptions`,
 * `workspace/configuration` and `workspace/didChangeConfiguration`. */
export function serverSettings(config: SettingsReader): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    const value = config.get<unknown>(key);
    if (value !== undefined && value !== null) {
      settings[camelToSnake(key)] = value;
    }
  }
  return settings;
}

export interface ExtensionSettings {
  interpreter: string;
  chatSession: string;
  diagnosticsForward: boolean;
  diagnosticsDebounceMs: number;
  diagnosticsMaxPerFile: number;
  showChangeNotices: boolean;
}

export function extensionSettings(config: SettingsReader): ExtensionSettings {
  return {
    interpreter: (config.get<string>("interpreter") ?? "").trim(),
    chatSession: config.get<string>("chatSession") ?? "vscode-chat",
    diagnosticsForward: config.get<boolean>("diagnostics.forward") ?? true,
    diagnosticsDebounceMs: Math.max(0, config.get<number>("diagnostics.debounceMs") ?? 300),
    diagnosticsMaxPerFile: Math.max(1, config.get<number>("diagnostics.maxPerFile") ?? 200),
    showChangeNotices: config.get<boolean>("showChangeNotices") ?? true,
  };
}

type ChangeEvent = Pick<vscode.ConfigurationChangeEvent, "affectsConfiguration">;

/** A change the running server should hear about (no restart needed). */
export function affectsServer(event: ChangeEvent): boolean {
  return SERVER_SETTING_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`));
}

/** A change that needs a new server process (another interpreter). */
export function needsRestart(event: ChangeEvent): boolean {
  return event.affectsConfiguration(`${SECTION}.interpreter`);
}
