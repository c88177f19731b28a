// execkit JavaScript prelude (spec-eval.md §11, JS6, JS7, JS10, JS15, JS17).
//
// The kernel evaluates this file once as a classic script. Its value is a function that the
// kernel calls with its native bindings (`ek`); it installs the global helpers and returns the
// hooks the kernel itself uses (rendering, error formatting, snapshots). Nothing here touches
// the OS except through `ek`, which the kernel never exposes to cells.
(function installPrelude(ek) {
  "use strict";

  const MAX_DEPTH = 4;
  const MAX_ITEMS = 100;
  const MAX_KEYS = 50;

  const well = (s) => (typeof s.toWellFormed === "function" ? s.toWellFormed() : s);

  // ---- inspector (JS6) ---------------------------------------------------------------------
  function inspect(value, depth = 0, seen = new Set(), nested = false) {
    switch (typeof value) {
      case "string":
        return nested ? JSON.stringify(value) : value;
      case "number":
        return Object.is(value, -0) ? "-0" : String(value);
      case "bigint":
        return `${value}n`;
      case "undefined":
        return "undefined";
      case "symbol":
        return value.toString();
      case "function":
        return inspectFunction(value);
      case "boolean":
        return String(value);
      default:
        break;
    }
    if (value === null) return "null";
    if (seen.has(value)) return "[Circular]";
    if (value instanceof Error) return value.stack ? `${value.name}: ${value.message}` : String(value);
    if (value instanceof Date) return isNaN(value) ? "Invalid Date" : value.toISOString();
    if (value instanceof RegExp) return String(value);
    if (value instanceof Promise) return `Promise { <${ek.promiseState(value)}> }`;
    if (depth >= MAX_DEPTH) return Array.isArray(value) ? "[Array]" : "[Object]";
    seen.add(value);
    try {
      return inspectContainer(value, depth, seen);
    } finally {
      seen.delete(value);
    }
  }

  function inspectFunction(fn) {
    if (ek.isClass(fn)) return `[class ${fn.name || "(anonymous)"}]`;
    return `[Function: ${fn.name || "(anonymous)"}]`;
  }

  function more(parts, total, shown) {
    if (total > shown) parts.push(`… ${total - shown} more`);
    return parts;
  }

  function inspectContainer(value, depth, seen) {
    const inner = (v) => inspect(v, depth + 1, seen, true);
    if (Array.isArray(value) || ArrayBuffer.isView(value)) {
      const items = Array.prototype.slice.call(value, 0, MAX_ITEMS).map(inner);
      const prefix = Array.isArray(value) ? "" : `${value.constructor.name}(${value.length}) `;
      return `${prefix}[${more(items, value.length, items.length).join(", ")}]`;
    }
    if (value instanceof Map) {
      const entries = [...value].slice(0, MAX_KEYS).map(([k, v]) => `${inner(k)} => ${inner(v)}`);
      return `Map(${value.size}) {${wrap(more(entries, value.size, entries.length))}}`;
    }
    if (value instanceof Set) {
      const entries = [...value].slice(0, MAX_KEYS).map(inner);
      return `Set(${value.size}) {${wrap(more(entries, value.size, entries.length))}}`;
    }
    const keys = Object.keys(value);
    const parts = keys.slice(0, MAX_KEYS).map((k) => `${keyText(k)}: ${inner(value[k])}`);
    const proto = Object.getPrototypeOf(value);
    const name = proto && proto !== Object.prototype && proto.constructor ? proto.constructor.name : "";
    const body = `{${wrap(more(parts, keys.length, parts.length))}}`;
    return name ? `${name} ${body}` : body;
  }

  const wrap = (parts) => (parts.length ? ` ${parts.join(", ")} ` : "");
  const keyText = (k) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k));

  // ---- JSON-serialisable check and bundles (JS6) ---------------------------------------------
  function isPlainJson(value, depth = 0, seen = new Set()) {
    if (value === null) return true;
    switch (typeof value) {
      case "string":
      case "boolean":
        return true;
      case "number":
        return Number.isFinite(value);
      case "object":
        break;
      default:
        return false;
    }
    if (depth > 64 || seen.has(value)) return false;
    const proto = Object.getPrototypeOf(value);
    const isArray = Array.isArray(value);
    if (!isArray && proto !== Object.prototype && proto !== null) return false;
    seen.add(value);
    const values = isArray ? value : Object.values(value);
    const ok = values.every((v) => isPlainJson(v, depth + 1, seen));
    seen.delete(value);
    return ok;
  }

  const wellReplacer = (_key, v) => (typeof v === "string" ? well(v) : v);

  // A frame line may not exceed 16 MiB (E29): text is cut like Python's repr, and a JSON
  // value too large to be worth inlining is left out.
  const MAX_TEXT = 65536;
  const MAX_JSON = 8 * 1024 * 1024;
  const cut = (t) => (t.length > MAX_TEXT ? `${t.slice(0, MAX_TEXT)}… [${t.length - MAX_TEXT} more characters]` : t);

  function bundle(value) {
    const text = cut(well(inspect(value)));
    if (isPlainJson(value)) {
      const json = JSON.stringify(value, wellReplacer);
      if (json.length <= MAX_JSON) return `{"application/json":${json},"text/plain":${JSON.stringify(text)}}`;
    }
    return JSON.stringify({ "text/plain": text });
  }

  // ---- errors (JS14) -------------------------------------------------------------------------
  function formatError(err) {
    if (err instanceof Error) {
      const stack = typeof err.stack === "string" ? err.stack.split("\n").filter((l) => l.trim()) : [];
      return JSON.stringify({ ename: String(err.name || "Error"), evalue: well(String(err.message)), stack });
    }
    return JSON.stringify({ ename: "Uncaught", evalue: well(inspect(err, 0, new Set(), true)), stack: [] });
  }

  // ---- console (JS15) ------------------------------------------------------------------------
  const format = (args) => args.map((a) => (typeof a === "string" ? a : inspect(a))).join(" ");
  const out = (...args) => ek.write(1, `${format(args)}\n`);
  const err = (...args) => ek.write(2, `${format(args)}\n`);
  const console = { log: out, info: out, debug: out, dir: out, warn: err, error: err };

  // ---- base64 and UTF-8 (JS10) ---------------------------------------------------------------
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

  function btoa(input) {
    const s = String(input);
    let outText = "";
    for (let i = 0; i < s.length; i += 3) {
      const a = s.charCodeAt(i), b = s.charCodeAt(i + 1), c = s.charCodeAt(i + 2);
      if (a > 255 || b > 255 || c > 255) throw new TypeError("btoa: the string contains characters outside Latin-1");
      const n = (a << 16) | ((b || 0) << 8) | (c || 0);
      outText += B64[(n >> 18) & 63] + B64[(n >> 12) & 63];
      outText += i + 1 < s.length ? B64[(n >> 6) & 63] : "=";
      outText += i + 2 < s.length ? B64[n & 63] : "=";
    }
    return outText;
  }

  function atob(input) {
    const s = String(input).replace(/[\t\n\f\r ]/g, "").replace(/=+$/, "");
    let outText = "", bits = 0, acc = 0;
    for (const ch of s) {
      const v = B64.indexOf(ch);
      if (v < 0) throw new TypeError("atob: the string is not valid base64");
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        outText += String.fromCharCode((acc >> bits) & 255);
      }
    }
    return outText;
  }

  const bytesToBinary = (bytes) => {
    let s = "";
    for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
    return s;
  };

  class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(input = "") {
      const bin = ek.utf8Encode(String(input));
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      return bytes;
    }
  }

  class TextDecoder {
    constructor(label = "utf-8") {
      if (!/^utf-?8$/i.test(String(label))) throw new RangeError(`TextDecoder: only utf-8 is supported (got "${label}")`);
    }
    get encoding() { return "utf-8"; }
    decode(input) {
      if (input === undefined) return "";
      const view = input instanceof ArrayBuffer ? new Uint8Array(input)
        : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
      return ek.utf8Decode(bytesToBinary(view));
    }
  }

  // ---- files and environment (§11) -----------------------------------------------------------
  function read(path, { offset = 1, limit } = {}) {
    return ek.readFile(String(path), offset, limit === undefined ? -1 : limit);
  }

  function writeData(path, data, append) {
    if (data instanceof Uint8Array) return ek.writeFile(String(path), btoa(bytesToBinary(data)), true, append);
    return ek.writeFile(String(path), String(data), false, append);
  }

  const write = (path, data) => writeData(path, data, false);
  const append = (path, data) => writeData(path, data, true);

  const environment = JSON.parse(ek.environ());
  function env(name, value) {
    if (name === undefined) return Object.assign({}, environment);
    if (value === undefined) return Object.prototype.hasOwnProperty.call(environment, name) ? environment[name] : undefined;
    environment[String(name)] = String(value);
    return String(value);
  }

  // ---- display (§11) -------------------------------------------------------------------------
  function display(value, mime) {
    if (mime === undefined) {
      if (value !== undefined) ek.display(bundle(value));
      return undefined;
    }
    let data = value;
    if (value instanceof Uint8Array) data = btoa(bytesToBinary(value));
    else if (typeof value !== "string") data = String(value);
    ek.display(JSON.stringify({ [String(mime)]: well(data) }));
    return undefined;
  }

  // ---- timers (JS7) --------------------------------------------------------------------------
  const timerCallback = (fn, args) => {
    if (typeof fn !== "function") throw new TypeError("the timer callback must be a function");
    return () => fn(...args);
  };
  const setTimeout = (fn, ms = 0, ...args) => ek.setTimer(timerCallback(fn, args), Number(ms) || 0, false);
  const setInterval = (fn, ms = 0, ...args) => ek.setTimer(timerCallback(fn, args), Number(ms) || 0, true);
  const clearTimeout = (id) => { if (id !== undefined) ek.clearTimer(Number(id)); };
  const clearInterval = clearTimeout;
  const queueMicrotask = (fn) => {
    if (typeof fn !== "function") throw new TypeError("queueMicrotask needs a function");
    Promise.resolve().then(() => fn());
  };

  // ---- tools (§8, §11) -----------------------------------------------------------------------
  class ToolError extends Error {
    constructor(message, result) {
      super(message);
      this.name = "ToolError";
      this.result = result;
    }
  }

  class ToolResult {
    constructor(raw) {
      const blocks = Array.isArray(raw && raw.content) ? raw.content : [];
      this.text = blocks.filter((b) => b && b.type === "text").map((b) => b.text).join("\n");
      this.isError = Boolean(raw && raw.isError);
      this.structured = raw && raw.structuredContent !== undefined ? raw.structuredContent : null;
      this.images = blocks.filter((b) => b && b.type === "image").map((b) => ({ mimeType: b.mimeType, data: b.data }));
    }
    toString() { return this.text; }
  }

  let callableTools = [];
  async function callTool(name, args = {}) {
    const reply = await ek.toolCall(name, args);
    if (reply.error !== undefined) throw new ToolError(reply.error, null);
    const result = new ToolResult(reply.result);
    if (result.isError) throw new ToolError(result.text.split("\n")[0] || `tool ${name} failed`, result);
    return result;
  }
  const tool = new Proxy(Object.create(null), {
    get: (_t, name) => (typeof name === "string" ? (args) => callTool(name, args) : undefined),
    has: (_t, name) => callableTools.includes(name),
    ownKeys: () => callableTools.slice(),
    getOwnPropertyDescriptor: (_t, name) => (callableTools.includes(name)
      ? { value: (args) => callTool(name, args), enumerable: true, configurable: true, writable: false }
      : undefined),
  });

  // ---- install ---------------------------------------------------------------------------------
  const globals = {
    console, display, read, write, append, env, tool, ToolResult, ToolError,
    setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask,
    TextEncoder, TextDecoder, atob, btoa,
  };
  for (const [name, value] of Object.entries(globals)) {
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  }
  const baseline = new Set(Object.getOwnPropertyNames(globalThis));

  // ---- snapshots (JS17) ------------------------------------------------------------------------
  // Functions and classes declared at the top level of a cell, by name, in declaration order:
  // only these are saved as source (a function made by a call may close over locals).
  // boa keeps no source text for classes, so the kernel passes each declaration's source.
  const declared = new Map();
  function noteDeclarations(entries) {
    for (const [name, source] of entries) {
      const value = globalThis[name];
      declared.delete(name);
      if (typeof value === "function") declared.set(name, { value, source });
    }
  }
  const isDeclared = (name) => declared.has(name) && declared.get(name).value === globalThis[name];

  const TYPED = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
    "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"];

  class Skip {
    constructor(reason) { this.reason = reason; }
  }

  function encode(v, seen) {
    switch (typeof v) {
      case "string":
      case "boolean":
        return well(v);
      case "number":
        return Number.isFinite(v) && !Object.is(v, -0) ? v : { n: String(v) };
      case "undefined":
        return { u: 1 };
      case "bigint":
        return { b: v.toString() };
      case "function":
        throw new Skip("a function that is not a top-level declaration (it may close over locals)");
      case "symbol":
        throw new Skip("a symbol");
      default:
        break;
    }
    if (v === null) return null;
    if (seen.has(v)) throw new Skip("a circular or shared reference");
    seen.add(v);
    try {
      return encodeObject(v, seen);
    } finally {
      seen.delete(v);
    }
  }

  function encodeObject(v, seen) {
    if (Array.isArray(v)) return { a: v.map((x) => encode(x, seen)) };
    if (v instanceof Date) return { d: v.getTime() };
    if (v instanceof RegExp) return { r: [v.source, v.flags] };
    if (v instanceof Map) return { m: [...v].map(([k, x]) => [encode(k, seen), encode(x, seen)]) };
    if (v instanceof Set) return { s: [...v].map((x) => encode(x, seen)) };
    if (ArrayBuffer.isView(v) && TYPED.includes(v.constructor.name)) {
      return { t: v.constructor.name, v: Array.from(v, (x) => (typeof x === "bigint" ? x.toString() : x)) };
    }
    if (v instanceof Promise) throw new Skip("a promise");
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      const name = proto && proto.constructor && proto.constructor.name;
      throw new Skip(`an instance of ${name || "a non-plain class"}`);
    }
    const o = {};
    for (const k of Object.keys(v)) o[k] = encode(v[k], seen);
    return { o };
  }

  function decode(e) {
    if (e === null || typeof e !== "object") return e;
    if ("u" in e) return undefined;
    if ("n" in e) return Number(e.n);
    if ("b" in e) return BigInt(e.b);
    if ("a" in e) return e.a.map(decode);
    if ("d" in e) return new Date(e.d);
    if ("r" in e) return new RegExp(e.r[0], e.r[1]);
    if ("m" in e) return new Map(e.m.map(([k, x]) => [decode(k), decode(x)]));
    if ("s" in e) return new Set(e.s.map(decode));
    if ("t" in e) {
      const Ctor = globalThis[e.t];
      return Ctor.from(e.v, (x) => (e.t.startsWith("Big") ? BigInt(x) : x));
    }
    const o = {};
    for (const k of Object.keys(e.o)) o[k] = decode(e.o[k]);
    return o;
  }

  // Names added since the prelude. Property order is insertion order, so only the first
  // `baseline.size` names can be built-ins: the rest are not checked one by one (a Set lookup
  // per name would cost seconds with a million globals).
  function userNames() {
    const all = Object.getOwnPropertyNames(globalThis);
    const head = all.slice(0, baseline.size).filter((n) => !baseline.has(n));
    return head.concat(all.slice(baseline.size));
  }

  // Returns {entries: [{name, source} | {name, value}], skipped: [{name, reason}], more, moreReason}
  // as JSON. `skipped` lists at most `listed` names; `more` counts the rest, so a million
  // globals past the budget cost a count, not a million-entry list.
  function snapshot(budgetMs, perValue, total, listed) {
    const entries = [];
    const skipped = [];
    let unlisted = 0;
    let moreReason = "";
    const skip = (name, reason) => {
      if (skipped.length < listed) skipped.push({ name, reason });
      else { unlisted += 1; moreReason = reason; }
    };
    let used = 0;
    const names = userNames();
    const own = (n) => Object.prototype.hasOwnProperty.call(globalThis, n);
    const sources = [...declared.keys()].filter((n) => isDeclared(n) && own(n));
    const count = sources.length + names.length;
    const nameAt = (k) => (k < sources.length ? sources[k] : names[k - sources.length]);
    // The time budget is for encoding; listing the names is needed whatever it costs.
    const start = Date.now();
    for (let k = 0; k < count; k++) {
      const name = nameAt(k);
      if (k >= sources.length && isDeclared(name)) continue;
      if (Date.now() - start > budgetMs) {
        for (; k < count && skipped.length < listed; k++) {
          if (k < sources.length || !isDeclared(nameAt(k))) skip(nameAt(k), "snapshot budget");
        }
        if (k < count) { unlisted += count - k; moreReason = "snapshot budget"; }
        break;
      }
      let entry;
      try {
        entry = isDeclared(name)
          ? { name, source: declared.get(name).source }
          : { name, value: encode(globalThis[name], new Set()) };
      } catch (problem) {
        skip(name, problem instanceof Skip ? problem.reason : `cannot be encoded: ${problem}`);
        continue;
      }
      const size = JSON.stringify(entry, wellReplacer).length;
      if (size > perValue || used + size > total) {
        skip(name, size > perValue ? "snapshot budget (value over 1 MiB)" : "snapshot budget");
        continue;
      }
      used += size;
      entries.push(entry);
    }
    return JSON.stringify({ entries, skipped, more: unlisted, moreReason }, wellReplacer);
  }

  // Replays sources first (in declaration order), then values; returns {restored, failed}.
  function restore(text) {
    const { entries } = JSON.parse(text);
    const restored = [];
    const failed = [];
    const indirectEval = eval;
    for (const e of entries.filter((x) => "source" in x)) {
      try {
        globalThis[e.name] = indirectEval(`(${e.source})`);
        declared.set(e.name, { value: globalThis[e.name], source: e.source });
        restored.push(e.name);
      } catch (problem) {
        failed.push({ name: e.name, reason: `its source did not evaluate: ${problem}` });
      }
    }
    for (const e of entries.filter((x) => "value" in x)) {
      try {
        globalThis[e.name] = decode(e.value);
        restored.push(e.name);
      } catch (problem) {
        failed.push({ name: e.name, reason: `its value did not decode: ${problem}` });
      }
    }
    return JSON.stringify({ restored, failed });
  }

  return {
    bundle,
    formatError,
    inspect: (v) => well(inspect(v)),
    setTools: (names) => { callableTools = names.slice(); },
    noteDeclarations,
    snapshot,
    restore,
  };
});
