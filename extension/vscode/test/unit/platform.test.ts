import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { unsupportedPlatform } from "../../src/common/platform";

describe("where the server runs", () => {
  it("on Windows outside a WSL remote: says to reopen the folder in WSL", () => {
    const said = unsupportedPlatform("win32", undefined);
    assert.ok(said);
    assert.match(said, /WSL/);
    assert.match(said, /Reopen Folder in WSL/);
  });

  it("runs on Linux, macOS, and in any remote window (the extension runs there)", () => {
    assert.equal(unsupportedPlatform("linux", undefined), undefined);
    assert.equal(unsupportedPlatform("darwin", undefined), undefined);
    assert.equal(unsupportedPlatform("win32", "wsl"), undefined);
    assert.equal(unsupportedPlatform("linux", "ssh-remote"), undefined);
  });
});
