//! `execkit artifact`: read, list and collect the stored artifacts (spec-output O29–O31).
//!
//! Reads go through the same `ArtifactStore::read` as MCP `resources/read`, so a selector gives
//! the same text in both places. `--raw` bypasses it and streams the stored bytes unchanged.

use std::io::Write as _;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use clap::{ArgGroup, Args};
use execkit::{ArtifactId, ArtifactStore, ReadOutput, Selection, SelectionOptions};
use execkit_output::artifact::{ArtifactError, ArtifactMeta};
use execkit_output::format;

use crate::common::{self, EXIT_FAILURE, EXIT_OK};

/// How many artifacts `--list` shows, the same as MCP `resources/list` (O30).
const LIST_LIMIT: usize = 100;

#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("selector").args(["lines", "head", "tail", "grep"]).multiple(false)),
    long_about = "Read a stored artifact: the full output a tool result cites as \
        artifact://<id>.\n\n\
        Without a selector it prints the head+tail window; --lines, --head, --tail and --grep \
        pick what to show (a URI may carry the same as a query: artifact://<id>?lines=1-50). \
        --raw writes the stored bytes unchanged and uncapped.\n\n\
        Exit status: 0 found, 1 not found (or artifacts are off), 2 usage error."
)]
pub struct ArtifactArgs {
    /// The artifact: `3f9a0c12` or `artifact://3f9a0c12[?query]`.
    #[arg(value_name = "ID|URI", required_unless_present_any = ["list", "gc"])]
    target: Option<String>,
    /// Lines a to b, 1-based and inclusive (`--lines 100-200`).
    #[arg(long, value_name = "A-B")]
    lines: Option<String>,
    /// The first N lines.
    #[arg(long, value_name = "N")]
    head: Option<u64>,
    /// The last N lines.
    #[arg(long, value_name = "N")]
    tail: Option<u64>,
    /// Lines matching a regular expression (Rust regex syntax).
    #[arg(long, value_name = "RE")]
    grep: Option<String>,
    /// Lines of context around each grep match (0..20).
    #[arg(short = 'C', long, value_name = "N", requires = "grep",
          value_parser = clap::value_parser!(u64).range(0..=20))]
    context: Option<u64>,
    /// Most grep matches to show (1..10000, default 200).
    #[arg(long, value_name = "N", requires = "grep",
          value_parser = clap::value_parser!(u64).range(1..=10000))]
    max: Option<u64>,
    /// Write the stored bytes unchanged, with no window or footer.
    #[arg(long, conflicts_with = "selector")]
    raw: bool,
    /// List the newest artifacts instead.
    #[arg(long, conflicts_with_all = ["target", "selector", "raw", "gc"])]
    list: bool,
    /// Run one retention round (delete expired artifacts) instead.
    #[arg(long, conflicts_with_all = ["target", "selector", "raw"])]
    gc: bool,
}

pub async fn run(cwd: Option<&Path>, args: ArtifactArgs) -> anyhow::Result<i32> {
    let toolkit = common::cli_toolkit(cwd)?;
    let store = toolkit.artifacts().cloned().map_err(str::to_owned);
    toolkit.close().await;
    let store = match store {
        Ok(store) => store,
        Err(reason) => {
            eprintln!("execkit: artifacts are off: {reason}");
            return Ok(EXIT_FAILURE);
        }
    };
    tokio::task::spawn_blocking(move || run_blocking(&store, &args))
        .await
        .context("the artifact reader panicked")?
}

fn run_blocking(store: &ArtifactStore, args: &ArtifactArgs) -> anyhow::Result<i32> {
    if args.list {
        return list(store);
    }
    if args.gc {
        return gc(store);
    }
    let Some(target) = args.target.as_deref() else {
        return common::usage("name an artifact, or use --list or --gc");
    };
    let (id, query) = match ArtifactId::parse(target) {
        Ok(parsed) => parsed,
        Err(err) => return common::usage(err.to_string()),
    };
    let query = query.filter(|q| !q.is_empty());
    if args.raw {
        if query.is_some() {
            return common::usage("--raw reads the whole artifact; drop the ?query from the URI");
        }
        return raw(store, &id);
    }
    let selection = match selection(args, query.as_deref()) {
        Ok(selection) => selection,
        Err(err) => return common::usage(err.to_string()),
    };
    match store.read(&id, &selection) {
        Ok(ReadOutput::Text(text)) => {
            let mut text = text.into_bytes();
            if !text.ends_with(b"\n") {
                text.push(b'\n');
            }
            common::write_stdout(&text)?;
            Ok(EXIT_OK)
        }
        Ok(ReadOutput::Binary { bytes, .. }) => {
            common::write_stdout(&bytes)?;
            Ok(EXIT_OK)
        }
        Err(err) => read_error(err),
    }
}

/// The selector from the flags or from the URI query, never both.
fn selection(args: &ArtifactArgs, query: Option<&str>) -> Result<Selection, ArtifactError> {
    let options = SelectionOptions {
        lines: args.lines.clone(),
        head: args.head,
        tail: args.tail,
        grep: args.grep.clone(),
        context: args.context,
        max: args.max,
    };
    options.resolve(query)
}

fn raw(store: &ArtifactStore, id: &ArtifactId) -> anyhow::Result<i32> {
    let mut file = match store.open_raw(id) {
        Ok(file) => file,
        Err(err) => return read_error(err),
    };
    let mut stdout = std::io::stdout().lock();
    match std::io::copy(&mut file, &mut stdout).and_then(|_| stdout.flush()) {
        Ok(()) => Ok(EXIT_OK),
        // The reader went away (`| head`): not an error of ours.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(EXIT_OK),
        Err(err) => Err(err).with_context(|| format!("failed to copy artifact {id} to stdout")),
    }
}

fn read_error(err: ArtifactError) -> anyhow::Result<i32> {
    match err {
        ArtifactError::InvalidUri(_) | ArtifactError::BadSelection(_) => {
            common::usage(err.to_string())
        }
        ArtifactError::NotFound(_) | ArtifactError::Disabled(_) => {
            eprintln!("execkit: {err}");
            Ok(EXIT_FAILURE)
        }
        ArtifactError::Io { .. } => Err(err.into()),
    }
}

fn list(store: &ArtifactStore) -> anyhow::Result<i32> {
    let metas = store.list(LIST_LIMIT);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut out = String::new();
    if metas.is_empty() {
        out.push_str("No artifacts.\n");
    }
    for meta in &metas {
        out.push_str(&list_line(meta, now));
        out.push('\n');
    }
    common::write_stdout(out.as_bytes())?;
    Ok(EXIT_OK)
}

/// `3f9a0c12  5 min ago  1.2 MiB  300000 lines  bash  seq 1 300000`
fn list_line(meta: &ArtifactMeta, now: u64) -> String {
    let size = format::size(meta.stored_bytes);
    let amount =
        if meta.binary { meta.mime.clone() } else { format!("{} lines", meta.total_lines) };
    let state = if meta.complete { "" } else { "  (still being written)" };
    format!(
        "{}  {:>10}  {:>10}  {:>14}  {:<5} {}{state}",
        meta.id,
        age(now.saturating_sub(meta.created)),
        size,
        amount,
        meta.tool,
        meta.label.replace('\n', " "),
    )
}

fn age(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds} s ago"),
        60..3600 => format!("{} min ago", seconds / 60),
        3600..86400 => format!("{} h ago", seconds / 3600),
        _ => format!("{} d ago", seconds / 86400),
    }
}

fn gc(store: &ArtifactStore) -> anyhow::Result<i32> {
    let report = store.gc();
    let text = if report.skipped_locked {
        "Skipped: another execkit process is collecting artifacts right now.\n".to_owned()
    } else {
        format!(
            "Deleted {} artifact{} ({} freed).\n",
            report.deleted.len(),
            if report.deleted.len() == 1 { "" } else { "s" },
            format::size(report.freed_bytes),
        )
    };
    common::write_stdout(text.as_bytes())?;
    Ok(EXIT_OK)
}
