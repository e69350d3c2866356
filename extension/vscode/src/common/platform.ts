// Where the server can run. readkeeper's server needs Linux or macOS (openat2 or
// O_NOFOLLOW walks, Unix sockets with peer credentials, fork-based PDF workers): on
// Windows it runs in WSL, with VS Code's WSL remote. Said once, on start, instead of a
// server that fails in an obscure way.

/** What to tell a Windows user whose window is not a WSL remote, or undefined where the
 * server runs (Linux, macOS, and any remote: the extension then runs on the remote). */
export function unsupportedPlatform(platform: string, remoteName: string | undefined): string | undefined {
  if (platform !== "win32" || remoteName) return undefined;
  return (
    "readkeeper's server runs on Linux and macOS; on Windows it runs under WSL. Open this " +
    'folder in WSL (the "WSL" extension: "WSL: Reopen Folder in WSL") and readkeeper starts there.'
  );
}
