// What `require("vscode")` returns in tests: the fake's classes and enums, and an inert
// class for any other name (vscode-languageclient extends a few at load time).
import * as fake from "./fakeVscode";

const known = fake as unknown as Record<string | symbol, unknown>;
const inert = new Map<string | symbol, unknown>();

export = new Proxy(known, {
  get(target, name) {
    if (name in target) return target[name];
    if (name === "__esModule" || name === "then" || name === "default") return undefined;
    if (!inert.has(name)) inert.set(name, class {});
    return inert.get(name);
  },
});
