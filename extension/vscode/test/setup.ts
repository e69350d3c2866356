// Loaded with `node --require`: makes `require("vscode")` return the fake module, so the
// extension's modules load under node's test runner.
import Module = require("node:module");
import * as path from "node:path";

const fake = path.join(__dirname, "fakeVscodeModule.js");
const loader = Module as unknown as {
  _resolveFilename(request: string, ...rest: unknown[]): string;
};
const resolve = loader._resolveFilename;
loader._resolveFilename = function (request: string, ...rest: unknown[]): string {
  return request === "vscode" ? fake : resolve.call(this, request, ...rest);
};
