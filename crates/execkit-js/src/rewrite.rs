//! Cell rewriting (spec-eval.md JS3, JS4, JS9): top-level `let`/`const`/`class` become `var`
//! so a later cell may declare them again; cells with top-level `await`, `return` or a static
//! `import` run inside an async arrow whose declarations are assignments to global `var`s.
//! No rewrite adds or removes a line, so error positions stay cell-relative.

use crate::tokenizer::{Kind, Token, tokenize};

/// Names a cell declares at its top level.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Names {
    /// `let`, `const`, `var` and import bindings.
    pub vars: Vec<String>,
    /// Function declarations (saved as source by snapshots).
    pub functions: Vec<String>,
    /// Class declarations (saved as source by snapshots).
    pub classes: Vec<String>,
    /// The source text of each top-level function and class declaration, by name: boa keeps
    /// no source text for classes, and snapshots replay these.
    pub sources: Vec<(String, String)>,
}

impl Names {
    fn add_class(&mut self, name: &str, source: &Option<String>) {
        self.classes.push(name.to_string());
        self.sources.extend(source.iter().map(|s| (name.to_string(), s.clone())));
    }

    fn add_function(&mut self, name: &str, source: &Option<String>) {
        self.functions.push(name.to_string());
        self.sources.extend(source.iter().map(|s| (name.to_string(), s.clone())));
    }

    pub fn all(&self) -> impl Iterator<Item = &String> {
        self.vars.iter().chain(&self.functions).chain(&self.classes)
    }
}

/// How to run a cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// A classic script, already rewritten.
    Sync { code: String, names: Names },
    /// `declare` (one line of `var`s, may be empty) runs first, then `body`, an async arrow
    /// call whose promise is the cell. `plain_body` is the same without the `return` added
    /// before the last expression, for when that guess does not parse.
    Async { declare: String, body: String, plain_body: String, names: Names },
}

/// Plans a cell, or `None` when the tokenizer is unsure (the cell then runs as written).
pub fn plan(src: &str) -> Option<Plan> {
    let toks = tokenize(src).ok()?;
    let info = annotate(src, &toks);
    let cx = Cx { src, toks: &toks, info: &info };
    let stmts = cx.statements();
    if cx.is_async(&stmts) { Some(cx.async_plan(&stmts)) } else { Some(cx.sync_plan(&stmts)) }
}

#[derive(Clone, Copy, Default)]
struct Info {
    /// Bracket depth before the token.
    depth: usize,
    /// Function bodies enclosing the token.
    fn_depth: usize,
    /// At depth 0: the token starts a statement.
    stmt_start: bool,
    /// For an opening bracket: the index of its closing token.
    close: usize,
}

const NOT_FUNCTION_HEADS: [&str; 6] = ["if", "for", "while", "switch", "catch", "with"];
const BLOCK_AFTER: [&str; 6] = [")", "=>", "else", "try", "finally", "do"];
const CONTINUES_EXPR: [&str; 3] = ["in", "of", "instanceof"];
const STATEMENT_WORDS: [&str; 20] = [
    "var", "let", "const", "class", "function", "if", "for", "while", "do", "switch", "try",
    "return", "throw", "break", "continue", "import", "export", "with", "debugger", "else",
];

fn ends_expression(src: &str, tok: &Token) -> bool {
    match tok.kind {
        Kind::Ident | Kind::Num | Kind::Str | Kind::Template | Kind::Regex => true,
        Kind::Punct => matches!(tok.text(src), ")" | "]" | "}" | "++" | "--"),
    }
}

fn can_start_statement(src: &str, tok: &Token) -> bool {
    match tok.kind {
        Kind::Ident => !CONTINUES_EXPR.contains(&tok.text(src)),
        Kind::Num | Kind::Str | Kind::Regex => true,
        Kind::Template => false,
        Kind::Punct => matches!(tok.text(src), "{" | "++" | "--" | "!" | "~" | ";"),
    }
}

/// Computes depth, function depth, statement starts and bracket matches.
fn annotate(src: &str, toks: &[Token]) -> Vec<Info> {
    let mut info = vec![Info::default(); toks.len()];
    // (index of the opening token, is a function body, is a block)
    let mut stack: Vec<(usize, bool, bool)> = Vec::new();
    let mut closed_block = vec![false; toks.len()];
    let mut paren_open = vec![usize::MAX; toks.len()];
    for i in 0..toks.len() {
        let text = toks[i].text(src);
        info[i].depth = stack.len();
        info[i].fn_depth = stack.iter().filter(|s| s.1).count();
        if stack.is_empty() {
            info[i].stmt_start = i == 0 || {
                let prev = &toks[i - 1];
                let p = prev.text(src);
                p == ";"
                    || (p == "}" && closed_block[i - 1])
                    || (toks[i].nl_before
                        && ends_expression(src, prev)
                        && can_start_statement(src, &toks[i]))
            };
        }
        match text {
            "(" | "[" | "{" => {
                let is_fn = text == "{" && opens_function(src, toks, &paren_open, i);
                let is_block = text == "{"
                    && (is_fn || (stack.is_empty() && opens_block(src, toks, &info, i)));
                stack.push((i, is_fn, is_block));
            }
            ")" | "]" | "}" => {
                if let Some((open, _, block)) = stack.pop() {
                    info[open].close = i;
                    closed_block[i] = block;
                    paren_open[i] = open;
                }
            }
            _ => {}
        }
    }
    info
}

fn opens_function(src: &str, toks: &[Token], paren_open: &[usize], i: usize) -> bool {
    let Some(prev) = i.checked_sub(1).map(|p| &toks[p]) else { return false };
    match prev.text(src) {
        "=>" => true,
        ")" => {
            let open = paren_open[i - 1];
            open != usize::MAX
                && open > 0
                && toks[open - 1].kind == Kind::Ident
                && !NOT_FUNCTION_HEADS.contains(&toks[open - 1].text(src))
        }
        _ => false,
    }
}

fn opens_block(src: &str, toks: &[Token], info: &[Info], i: usize) -> bool {
    if info[i].stmt_start || i == 0 {
        return true;
    }
    let prev = toks[i - 1].text(src);
    let class_body = i >= 2
        && toks[i - 1].kind == Kind::Ident
        && matches!(toks[i - 2].text(src), "class" | "extends");
    BLOCK_AFTER.contains(&prev) || class_body
}

/// One top-level statement the rewriter acts on.
#[derive(Debug)]
enum Stmt {
    /// `let`/`const`/`var` at `kw`; declarators that are object patterns start at `objects`.
    Lexical {
        kw: usize,
        objects: Vec<usize>,
        names: Vec<String>,
    },
    Class {
        kw: usize,
        name: String,
        source: Option<String>,
    },
    Function {
        name: String,
        source: Option<String>,
    },
    /// A static import spanning tokens `kw..=end`.
    Import {
        kw: usize,
        end: usize,
        replacement: String,
        names: Vec<String>,
    },
    /// Any other statement starting at this token.
    Other {
        first: usize,
    },
}

struct Cx<'a> {
    src: &'a str,
    toks: &'a [Token],
    info: &'a [Info],
}

impl Cx<'_> {
    fn text(&self, i: usize) -> &str {
        self.toks.get(i).map_or("", |t| t.text(self.src))
    }

    fn statements(&self) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.toks.len() {
            if self.info[i].depth == 0 && self.info[i].stmt_start {
                let (stmt, next) = self.statement(i);
                out.push(stmt);
                i = next.max(i + 1);
            } else {
                i += 1;
            }
        }
        out
    }

    /// Parses the statement starting at `i`; returns it and where scanning goes on.
    fn statement(&self, i: usize) -> (Stmt, usize) {
        let next_ident = self.toks.get(i + 1).is_some_and(|t| t.kind == Kind::Ident);
        match self.text(i) {
            "const" | "var" => self.lexical(i),
            "let" if self.is_let_declaration(i) => self.lexical(i),
            "class" if next_ident => {
                let source = self.declaration_source(i);
                (Stmt::Class { kw: i, name: self.text(i + 1).to_string(), source }, i + 2)
            }
            "function" => self.function(i, i + 1),
            "async" if self.text(i + 1) == "function" && !self.toks[i + 1].nl_before => {
                self.function(i, i + 2)
            }
            "import" if !matches!(self.text(i + 1), "(" | ".") => match self.import(i) {
                Some((stmt, end)) => (stmt, end),
                None => (Stmt::Other { first: i }, i + 1),
            },
            _ => (Stmt::Other { first: i }, i + 1),
        }
    }

    fn is_let_declaration(&self, i: usize) -> bool {
        match self.toks.get(i + 1) {
            Some(t) if t.kind == Kind::Ident => !CONTINUES_EXPR.contains(&t.text(self.src)),
            Some(_) => matches!(self.text(i + 1), "[" | "{"),
            None => false,
        }
    }

    /// The text from token `start` to the end of the first top-level `{…}` after it.
    fn declaration_source(&self, start: usize) -> Option<String> {
        let open = (start + 1..self.toks.len())
            .find(|&j| self.info[j].depth == 0 && self.text(j) == "{")?;
        let close = self.info[open].close;
        (close > open).then(|| self.src[self.toks[start].start..self.toks[close].end].to_string())
    }

    fn function(&self, start: usize, mut j: usize) -> (Stmt, usize) {
        if self.text(j) == "*" {
            j += 1;
        }
        match self.toks.get(j) {
            Some(t) if t.kind == Kind::Ident => {
                let source = self.declaration_source(start);
                (Stmt::Function { name: t.text(self.src).to_string(), source }, j + 1)
            }
            _ => (Stmt::Other { first: j.saturating_sub(1) }, j),
        }
    }

    fn lexical(&self, kw: usize) -> (Stmt, usize) {
        let mut names = Vec::new();
        let mut objects = Vec::new();
        let mut j = kw + 1;
        loop {
            match self.toks.get(j) {
                Some(t) if t.kind == Kind::Ident => {
                    names.push(t.text(self.src).to_string());
                    j += 1;
                }
                Some(_) if matches!(self.text(j), "[" | "{") => {
                    if self.text(j) == "{" {
                        objects.push(j);
                    }
                    let close = self.info[j].close;
                    self.pattern_names(j + 1, close, &mut names);
                    j = close + 1;
                }
                _ => break,
            }
            if self.text(j) == "=" {
                let init = j + 1;
                j = init;
                while j < self.toks.len() {
                    let at_top = self.info[j].depth == 0;
                    let t = self.text(j);
                    if at_top && (t == "," || t == ";" || (j > init && self.info[j].stmt_start)) {
                        break;
                    }
                    j += 1;
                }
            }
            if self.text(j) == "," && self.info.get(j).is_some_and(|i| i.depth == 0) {
                j += 1;
            } else {
                break;
            }
        }
        (Stmt::Lexical { kw, objects, names }, j)
    }

    /// Binding names in a destructuring pattern between tokens `from` and `to` (exclusive).
    fn pattern_names(&self, from: usize, to: usize, out: &mut Vec<String>) {
        let mut i = from;
        let mut level = 0usize;
        while i < to {
            let t = self.text(i);
            match t {
                "[" | "{" | "(" => {
                    let close = self.info[i].close;
                    if self.text(close + 1) == ":" {
                        i = close + 1; // a computed key
                        continue;
                    }
                    level += 1;
                }
                "]" | "}" | ")" => level = level.saturating_sub(1),
                "=" => {
                    i = self.skip_default(i + 1, to, level);
                    continue;
                }
                _ => {
                    let prev = self.text(i - 1);
                    let next = self.text(i + 1);
                    let binding_pos = matches!(prev, "{" | "[" | "," | "..." | ":");
                    if self.toks[i].kind == Kind::Ident
                        && binding_pos
                        && matches!(next, "," | "}" | "]" | "=")
                    {
                        out.push(t.to_string());
                    }
                }
            }
            i += 1;
        }
    }

    /// Skips a default value inside a pattern; returns the index of the `,` or closing token.
    fn skip_default(&self, mut i: usize, to: usize, level: usize) -> usize {
        let mut depth = level;
        while i < to {
            match self.text(i) {
                "[" | "{" | "(" => depth += 1,
                "]" | "}" | ")" if depth == level => return i,
                "]" | "}" | ")" => depth -= 1,
                "," if depth == level => return i,
                _ => {}
            }
            i += 1;
        }
        i
    }

    /// A static import: its bindings and the `await import(…)` that replaces it.
    fn import(&self, kw: usize) -> Option<(Stmt, usize)> {
        let mut j = kw + 1;
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut namespace = None;
        if self.toks.get(j)?.kind != Kind::Str {
            if self.toks[j].kind == Kind::Ident && self.text(j) != "from" {
                pairs.push(("default".into(), self.text(j).to_string()));
                j += 1;
                if self.text(j) == "," {
                    j += 1;
                }
            }
            if self.text(j) == "*" && self.text(j + 1) == "as" {
                namespace = Some(self.text(j + 2).to_string());
                j += 3;
            } else if self.text(j) == "{" {
                let close = self.info[j].close;
                self.import_specifiers(j + 1, close, &mut pairs);
                j = close + 1;
            }
            if self.text(j) != "from" {
                return None;
            }
            j += 1;
        }
        let spec_tok = self.toks.get(j)?;
        if spec_tok.kind != Kind::Str {
            return None;
        }
        let spec = spec_tok.text(self.src);
        let mut end = j;
        if matches!(self.text(end + 1), "with" | "assert") && self.text(end + 2) == "{" {
            end = self.info[end + 2].close;
        }
        if self.text(end + 1) == ";" {
            end += 1;
        }
        let (replacement, names) = import_replacement(spec, &pairs, namespace);
        Some((Stmt::Import { kw, end, replacement, names }, end + 1))
    }

    fn import_specifiers(&self, from: usize, to: usize, out: &mut Vec<(String, String)>) {
        let mut i = from;
        while i < to {
            let imported = self.text(i).trim_matches(['"', '\'']).to_string();
            if self.text(i + 1) == "as" {
                out.push((imported, self.text(i + 2).to_string()));
                i += 3;
            } else {
                out.push((imported.clone(), imported));
                i += 1;
            }
            if self.text(i) == "," {
                i += 1;
            }
        }
    }

    fn is_async(&self, stmts: &[Stmt]) -> bool {
        let awaits = self.toks.iter().enumerate().any(|(i, t)| {
            t.kind == Kind::Ident
                && self.info[i].fn_depth == 0
                && matches!(t.text(self.src), "await" | "return")
                && (i == 0 || self.text(i - 1) != ".")
        });
        awaits || stmts.iter().any(|s| matches!(s, Stmt::Import { .. }))
    }

    fn sync_plan(&self, stmts: &[Stmt]) -> Plan {
        let mut edits = Vec::new();
        let mut names = Names::default();
        for stmt in stmts {
            match stmt {
                Stmt::Lexical { kw, names: n, .. } => {
                    let padded = format!("{:<width$}", "var", width = self.text(*kw).len());
                    edits.push(self.replace(*kw, *kw, padded));
                    names.vars.extend(n.iter().cloned());
                }
                Stmt::Class { kw, name, source } => {
                    edits.push(self.replace(*kw, *kw, format!("var {name} = class")));
                    names.add_class(name, source);
                }
                Stmt::Function { name, source } => names.add_function(name, source),
                Stmt::Import { .. } | Stmt::Other { .. } => {}
            }
        }
        Plan::Sync { code: apply(self.src, edits), names }
    }

    fn async_plan(&self, stmts: &[Stmt]) -> Plan {
        let mut edits = Vec::new();
        let mut names = Names::default();
        for stmt in stmts {
            match stmt {
                Stmt::Lexical { kw, objects, names: n } => {
                    let blank = format!("{:<width$}", ";", width = self.text(*kw).len());
                    edits.push(self.replace(*kw, *kw, blank));
                    for &o in objects {
                        let at = self.toks[o].start;
                        edits.push((at, at, "__ek_d = ".to_string()));
                    }
                    names.vars.extend(n.iter().cloned());
                }
                Stmt::Class { kw, name, source } => {
                    edits.push(self.replace(*kw, *kw, format!(";{name} = class")));
                    names.add_class(name, source);
                }
                Stmt::Function { name, source } => names.add_function(name, source),
                Stmt::Import { kw, end, replacement, names: n } => {
                    let span = &self.src[self.toks[*kw].start..self.toks[*end].end];
                    let newlines = "\n".repeat(span.matches('\n').count());
                    edits.push(self.replace(*kw, *end, format!("{replacement}{newlines}")));
                    names.vars.extend(n.iter().cloned());
                }
                Stmt::Other { .. } => {}
            }
        }
        // A leading "use strict" directive must stay first in the wrapper to keep its meaning.
        let strict = self.toks.first().is_some_and(|t| {
            t.kind == Kind::Str && matches!(t.text(self.src), "'use strict'" | "\"use strict\"")
        });
        let mut publish = String::from("(async () => { ");
        if strict {
            publish.push_str("\"use strict\"; ");
        }
        publish.push_str("let __ek_d; ");
        for f in &names.functions {
            publish.push_str(&format!("globalThis.{f} = {f}; "));
        }
        let plain = apply(self.src, edits.clone());
        if let Some(Stmt::Other { first }) = stmts.last()
            && self.is_expression_start(*first)
        {
            let at = self.toks[*first].start;
            edits.push((at, at, "return ".to_string()));
        }
        let body = apply(self.src, edits);
        let mut all: Vec<&String> = names.all().collect();
        all.sort();
        all.dedup();
        let declare = if all.is_empty() {
            String::new()
        } else {
            let list: Vec<&str> = all.iter().map(|s| s.as_str()).collect();
            format!("var {};", list.join(", "))
        };
        Plan::Async {
            declare,
            body: format!("{publish}{body}\n}})()"),
            plain_body: format!("{publish}{plain}\n}})()"),
            names,
        }
    }

    fn is_expression_start(&self, i: usize) -> bool {
        let tok = &self.toks[i];
        let text = tok.text(self.src);
        match tok.kind {
            Kind::Num | Kind::Str | Kind::Template | Kind::Regex => true,
            Kind::Punct => matches!(text, "(" | "[" | "!" | "~" | "+" | "-" | "++" | "--"),
            Kind::Ident if text == "async" => self.text(i + 1) != "function",
            Kind::Ident => !STATEMENT_WORDS.contains(&text) && self.text(i + 1) != ":",
        }
    }

    fn replace(&self, from: usize, to: usize, text: String) -> (usize, usize, String) {
        (self.toks[from].start, self.toks[to].end, text)
    }
}

fn import_replacement(
    spec: &str,
    pairs: &[(String, String)],
    namespace: Option<String>,
) -> (String, Vec<String>) {
    let mut names: Vec<String> = pairs.iter().map(|(_, local)| local.clone()).collect();
    let load = format!("await import({spec})");
    let text = match namespace {
        Some(ns) => {
            let mut text = format!(";{ns} = {load};");
            for (imported, local) in pairs {
                text.push_str(&format!(" {local} = {ns}[{}];", js_quote(imported)));
            }
            names.push(ns);
            text
        }
        None if pairs.is_empty() => format!(";{load};"),
        None => {
            let fields: Vec<String> = pairs
                .iter()
                .map(|(imported, local)| format!("{}: {local}", js_quote(imported)))
                .collect();
            format!(";({{{}}} = {load});", fields.join(", "))
        }
    };
    (text, names)
}

fn js_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn apply(src: &str, mut edits: Vec<(usize, usize, String)>) -> String {
    edits.sort_by_key(|e| (e.0, e.1));
    let mut out = String::with_capacity(src.len() + 64);
    let mut at = 0;
    for (start, end, text) in edits {
        if start < at {
            continue;
        }
        out.push_str(&src[at..start]);
        out.push_str(&text);
        at = end;
    }
    out.push_str(&src[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sync(src: &str) -> (String, Names) {
        match plan(src).unwrap() {
            Plan::Sync { code, names } => (code, names),
            other => panic!("expected sync, got {other:?}"),
        }
    }

    fn asyn(src: &str) -> (String, String, Names) {
        match plan(src).unwrap() {
            Plan::Async { declare, body, names, .. } => (declare, body, names),
            other => panic!("expected async, got {other:?}"),
        }
    }

    #[test]
    fn sync_declarations_become_var() {
        let (code, names) =
            sync("let a = 1\nconst {b, c: [d], e = f(g)} = h\nclass K {}\nfunction k() {}");
        assert_eq!(
            code,
            "var a = 1\nvar   {b, c: [d], e = f(g)} = h\nvar K = class K {}\nfunction k() {}"
        );
        assert_eq!(names.vars, ["a", "b", "d", "e"]);
        assert_eq!(names.classes, ["K"]);
        assert_eq!(names.functions, ["k"]);
        assert_eq!(
            names.sources,
            [("K".into(), "class K {}".into()), ("k".into(), "function k() {}".into())]
        );
    }

    #[test]
    fn nested_declarations_are_untouched() {
        let src =
            "for (let i = 0; i < 3; i++) { const x = i }\nif (a) { let y = 2 }\nx = class Z {}";
        assert_eq!(sync(src).0, src);
    }

    #[test]
    fn async_cells_assign_to_declared_globals() {
        let (declare, body, names) = asyn("const {a, b} = await f()\nlet c = 1, [d] = e\nc + d");
        assert_eq!(declare, "var a, b, c, d;");
        assert_eq!(
            body,
            "(async () => { let __ek_d; ;     __ek_d = {a, b} = await f()\n;   c = 1, [d] = e\nreturn c + d\n})()"
        );
        assert_eq!(names.vars, ["a", "b", "c", "d"]);
    }

    #[test]
    fn async_functions_are_published_and_return_is_kept() {
        let (_, body, _) = asyn("function f() { return 1 }\nreturn f()");
        assert!(body.starts_with("(async () => { let __ek_d; globalThis.f = f; function f()"));
        assert!(body.contains("\nreturn f()\n})()"));
    }

    #[test]
    fn static_imports_become_dynamic() {
        let (declare, body, _) = asyn(
            "import x, {a as b, c} from \"./m.js\";\nimport * as ns from './n.js'\nimport './s.js'",
        );
        assert_eq!(declare, "var b, c, ns, x;");
        assert!(
            body.contains(";({\"default\": x, \"a\": b, \"c\": c} = await import(\"./m.js\"));\n")
        );
        assert!(body.contains(";ns = await import('./n.js');\n;await import('./s.js');"));
    }

    #[test]
    fn function_bodies_do_not_make_a_cell_async() {
        assert!(matches!(
            plan("async function f() { await g(); return 1 }").unwrap(),
            Plan::Sync { .. }
        ));
        assert!(matches!(plan("const f = async () => { await g() }").unwrap(), Plan::Sync { .. }));
        assert!(matches!(plan("o = { m() { return 1 } }").unwrap(), Plan::Sync { .. }));
        assert!(matches!(plan("for await (const x of y) {}").unwrap(), Plan::Async { .. }));
    }

    #[test]
    fn use_strict_stays_in_force_in_async_cells() {
        let (_, body, _) = asyn("'use strict'\nawait 1");
        assert!(
            body.starts_with("(async () => { \"use strict\"; let __ek_d; 'use strict'\n"),
            "{body}"
        );
    }

    #[test]
    fn line_count_is_preserved() {
        let src = "import {\n  a,\n  b\n} from './m.js'\nconst x = await a\nx";
        let (_, body, _) = asyn(src);
        assert_eq!(body.matches('\n').count(), src.matches('\n').count() + 1);
    }

    #[test]
    fn unsure_cells_are_not_planned() {
        assert_eq!(plan("let a = `x${"), None);
    }

    /// Pieces of JavaScript, some with line breaks inside literals or comments.
    fn piece() -> impl proptest::strategy::Strategy<Value = &'static str> {
        proptest::sample::select(vec![
            "let a = 1",
            "const {b, c: [d]} = e",
            "class K {}",
            "function f() { return 1 }",
            "x = 2",
            "await g()",
            "`t\n${a}\n`",
            "'s'",
            "/* c\n */",
            "// c",
            "if (a) { b() }",
            "f(\n1,\n2)",
            ";",
            "\n",
            "o = {k: [1, 2]}",
            "import {m} from './m.js'",
            "return a",
            "y++",
            "a / b",
        ])
    }

    proptest::proptest! {
        #[test]
        fn rewrites_keep_the_line_count(pieces in proptest::collection::vec(piece(), 0..12)) {
            let src = pieces.join("\n");
            let lines = src.matches('\n').count();
            match plan(&src) {
                Some(Plan::Sync { code, .. }) => proptest::prop_assert_eq!(code.matches('\n').count(), lines),
                Some(Plan::Async { body, plain_body, declare, .. }) => {
                    proptest::prop_assert!(!declare.contains('\n'));
                    proptest::prop_assert_eq!(body.matches('\n').count(), lines + 1);
                    proptest::prop_assert_eq!(plain_body.matches('\n').count(), lines + 1);
                }
                None => {}
            }
        }

        #[test]
        fn code_without_declarations_is_unchanged(pieces in proptest::collection::vec(
            proptest::sample::select(vec!["x = 2", "f(\n1)", "'s'", "// c", "if (a) { let q = 1 }", "a / b", ";", "\n"]),
            0..12,
        )) {
            let src = pieces.join("\n");
            if let Some(Plan::Sync { code, .. }) = plan(&src) {
                proptest::prop_assert_eq!(code, src);
            }
        }
    }
}
