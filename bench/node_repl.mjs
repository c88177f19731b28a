// The Node.js baseline of the JavaScript kernel benchmarks (spec-eval.md BM3): a minimal
// JSON-lines REPL with one persistent `vm` context. Each input line is {"id", "code"}; each
// output line is {"id", "result"} or {"id", "error"}, written when the code's value (awaited
// if it is a promise) is known.
import { createInterface } from "node:readline";
import vm from "node:vm";

const context = vm.createContext({});
const lines = createInterface({ input: process.stdin });

lines.on("line", async (line) => {
  const { id, code } = JSON.parse(line);
  try {
    const value = await vm.runInContext(code, context);
    process.stdout.write(`${JSON.stringify({ id, result: value })}\n`);
  } catch (e) {
    process.stdout.write(`${JSON.stringify({ id, error: String(e) })}\n`);
  }
});
