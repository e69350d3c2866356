import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { LOG_FILE_NAME, logFileFor, teeToFile } from "../../src/common/log";

describe("the output channel mirrored to a file (editor tests)", () => {
  it("only when READKEEPER_TEST_OUT names a folder", () => {
    assert.equal(logFileFor({}), undefined);
    assert.equal(logFileFor({ READKEEPER_TEST_OUT: "/out" }), path.join("/out", LOG_FILE_NAME));
  });

  it("writes every line the channel gets, and the channel still gets it", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rk-log-"));
    try {
      const got: string[] = [];
      const channel = {
        name: "readkeeper",
        info: (m: string) => got.push(`info ${m}`),
        error: (m: string | Error) => got.push(`error ${String(m)}`),
        appendLine: (m: string) => got.push(`line ${m}`),
        show: () => got.push("show"),
      };
      const file = path.join(dir, "out", LOG_FILE_NAME);
      const log = teeToFile(channel as never, file);
      log.info("server running");
      log.error("pip failed");
      log.appendLine("[stderr] server says hello");
      log.show();
      assert.equal(log.name, "readkeeper");
      assert.deepEqual(got, ["info server running", "error pip failed", "line [stderr] server says hello", "show"]);
      assert.equal(
        fs.readFileSync(file, "utf8"),
        "[info] server running\n[error] pip failed\n[stderr] server says hello\n",
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
