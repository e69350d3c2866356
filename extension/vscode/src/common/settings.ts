// Settings: the server's own settings (the "Server" section of package.json, generated
// from server/settings.py by scripts/sync_settings.py) and the extension's.
//
// A setting that widens the sandbox, names a program or data to load is the user's,
// never the repository's: package.json declares it `machine`-scoped (so VS Code never
// takes it from a workspace's .vscode/settings.json) and lists it in
// `restrictedConfigurations`; and it is read here from the user's and the default values
// only (`inspect`), so an older VS Code or a bug that returned a workspace value changes
// nothing. In restricted mode (an untrusted workspace) it is not sent to the server at all.
//
// A limit (a cap, a budget, a timeout, an interval: limits.json, generated from
// server/settings.py's `tighter`, and the extension's own below) may be set by a
// workspace, but only tightened: a repository's .vscode/settings.json must not raise
// `maxTokens` so that one read floods the agent's context. Its value is the user's (or
// the default), made stricter by a workspace's when that is stricter; in restricted mode
// no source makes it looser than the default.

import type * as vscode from "vscode";
import pkg from "../../package.json";
import serverLimits from "./limits.json";

export const SECTION = "readkeeper";

interface ConfigurationSection {
  title: string;
  properties: Record<string, { scope?: string; default?: unknown; minimum?: number }>;
}

function sections(): ConfigurationSection[] {
  return pkg.contributes.configuration as unknown as ConfigurationSection[];
}

/** Scopes VS Code never takes from a workspace's settings. */
export const USER_SCOPES: readonly string[] = ["machine", "application"];

/** Keys (without `readkeeper.`) of the settings only the user may set: those that
 * widen the sandbox, name a program or data to load (their scope in package.json). */
export const USER_ONLY_KEYS: readonly string[] = sections()
  .flatMap((section) => Object.entries(section.properties))
  .filter(([, schema]) => USER_SCOPES.includes(schema.scope ?? ""))
  .map(([key]) => key.slice(SECTION.length + 1));

/** Which way a limit is stricter: "lower" for a cap, "higher" for a least interval. */
export type Tighter = "lower" | "higher";

/** Every limit (keys without `readkeeper.`): the server's, then the extension's own. */
export const LIMITS: Readonly<Record<string, Tighter>> = {
  ...(serverLimits as Record<string, Tighter>),
  "diagnostics.debounceMs": "higher", // shorter forwards more often
  "diagnostics.maxPerFile": "lower",
};

function schemaOf(key: string): ConfigurationSection["properties"][string] {
  const full = `${SECTION}.${key}`;
  return sections().find((s) => full in s.properties)?.properties[full] ?? {};
}

function sectionKeys(title: string): string[] {
  const section = sections().find((s) => s.title === title);
  return Object.keys(section?.properties ?? {}).map((key) => key.slice(SECTION.length + 1));
}

/** camelCase keys (without `readkeeper.`) of the settings the server reads. */
export const SERVER_SETTING_KEYS: readonly string[] = sectionKeys("Server");

export function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
}

/** Reads settings like `WorkspaceConfiguration` (`get`, and `inspect` for where a
 * value comes from). */
export interface SettingsReader {
  get<T>(key: string): T | undefined;
  inspect<T>(
    key: string,
  ): { defaultValue?: T; globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T } | undefined;
}

/** `key`'s value as the user or the default has it: a workspace's value, at any level,
 * never counts. */
export function userValue<T>(config: SettingsReader, key: string): T | undefined {
  const found = config.inspect<T>(key);
  return found?.globalValue ?? found?.defaultValue;
}

/** A value the server would take for the limit `key` (a number, at least its minimum):
 * anything else from a workspace would make the server fall back to its default, which
 * may be looser than the user's value. */
function validLimit(key: string, value: unknown): value is number | boolean {
  const schema = schemaOf(key);
  if (typeof schema.default === "boolean") return typeof value === "boolean"; // on is looser
  const minimum = schema.minimum ?? -Infinity;
  return typeof value === "number" && Number.isFinite(value) && value >= minimum;
}

/** The limit `key`'s value: the user's (or the default), made stricter but never looser
 * by a workspace's, at any level; not `trusted`, never looser than the default. */
export function limitValue(config: SettingsReader, key: string, trusted = true): unknown {
  const stricter = LIMITS[key] === "lower" ? Math.min : Math.max;
  const found = config.inspect<unknown>(key);
  const own = found?.globalValue ?? found?.defaultValue;
  const fallback = schemaOf(key).default;
  const tighter = [found?.workspaceValue, found?.workspaceFolderValue]
    .filter((v) => validLimit(key, v))
    .map(Number);
  if (!trusted && own !== undefined && validLimit(key, fallback)) tighter.push(Number(fallback));
  if (tighter.length === 0) return own;
  const base = validLimit(key, own) ? own : fallback;
  const value = validLimit(key, base) ? stricter(Number(base), ...tighter) : stricter(...tighter);
  return typeof fallback === "boolean" ? value !== 0 : value;
}

/** A setting's value: the user's alone for a user-only setting, a limit only tightened
 * by a workspace, else the merged one. */
function valueOf<T>(config: SettingsReader, key: string, trusted = true): T | undefined {
  if (USER_ONLY_KEYS.includes(key)) return userValue<T>(config, key);
  if (key in LIMITS) return limitValue(config, key, trusted) as T | undefined;
  return config.get<T>(key);
}

/** The server's settings as it takes them (snake_case), for `initializationOptions`,
 * `workspace/configuration` and `workspace/didChangeConfiguration`. Not `trusted`
 * (restricted mode): without the user-only ones, which the server holds fixed anyway,
 * and no limit looser than its default (which the server enforces too). */
export function serverSettings(config: SettingsReader, trusted = true): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    if (!trusted && USER_ONLY_KEYS.includes(key)) continue;
    const value = valueOf<unknown>(config, key, trusted);
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
    interpreter: (valueOf<string>(config, "interpreter") ?? "").trim(),
    chatSession: valueOf<string>(config, "chatSession") ?? "vscode-chat",
    diagnosticsForward: valueOf<boolean>(config, "diagnostics.forward") ?? true,
    diagnosticsDebounceMs: Math.max(0, valueOf<number>(config, "diagnostics.debounceMs") ?? 300),
    diagnosticsMaxPerFile: Math.max(1, valueOf<number>(config, "diagnostics.maxPerFile") ?? 200),
    showChangeNotices: valueOf<boolean>(config, "showChangeNotices") ?? true,
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
