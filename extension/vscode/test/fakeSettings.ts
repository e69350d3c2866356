// A `WorkspaceConfiguration` for tests: the user's values, and a workspace's over them,
// as VS Code merges them in `get` and tells them apart in `inspect`.
import type { SettingsReader } from "../src/common/settings";

export function settingsReader(
  user: Record<string, unknown>,
  workspace: Record<string, unknown> = {},
): SettingsReader {
  return {
    get: <T>(key: string) => (key in workspace ? workspace[key] : user[key]) as T | undefined,
    inspect: <T>(key: string) => ({
      key,
      globalValue: user[key] as T | undefined,
      workspaceValue: workspace[key] as T | undefined,
      workspaceFolderValue: workspace[key] as T | undefined,
    }),
  };
}
