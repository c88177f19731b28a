//! Artifacts as MCP resources (spec-output O30): `artifact://<id>[?query]`.

use base64::Engine as _;
use execkit::{ArtifactId, ArtifactStore, ReadOutput, Selection, Toolkit};
use execkit_output::artifact::{ArtifactError, ArtifactMeta};
use execkit_output::format;
use rmcp::ErrorData as McpError;
use rmcp::model::{ListResourcesResult, ReadResourceResult, Resource, ResourceContents};

/// Artifacts per `resources/list` page (O30).
const PAGE: usize = 100;

/// Largest binary artifact sent as a base64 blob (O30); base64 makes it a third bigger on
/// the wire, and a client holds the whole message in memory.
const BLOB_LIMIT: u64 = 1024 * 1024;

const SCHEME: &str = "artifact://";

/// One page of the artifacts this server made, newest first (`owned` is oldest first). The
/// cursor is the id of the previous page's last artifact, so artifacts made between two pages
/// do not shift them; expired ones are skipped.
pub async fn list(
    toolkit: &Toolkit,
    owned: Vec<ArtifactId>,
    cursor: Option<&str>,
) -> Result<ListResourcesResult, McpError> {
    let mut newest_first = owned.into_iter().rev().peekable();
    if let Some(cursor) = cursor {
        let after =
            ArtifactId::parse(cursor).ok().map(|(id, _)| id).filter(|id| id.as_str() == cursor);
        let after = after.ok_or_else(|| invalid_cursor(cursor))?;
        newest_first.by_ref().find(|id| *id == after).ok_or_else(|| invalid_cursor(cursor))?;
    }
    // With artifacts off there is nothing to list; resources/read says why.
    let Ok(store) = toolkit.artifacts().cloned() else {
        return Ok(ListResourcesResult::with_all_items(Vec::new()));
    };
    let mut page = tokio::task::spawn_blocking(move || {
        newest_first.filter_map(|id| store.meta(&id).ok()).take(PAGE + 1).collect::<Vec<_>>()
    })
    .await
    .map_err(|err| McpError::internal_error(format!("listing artifacts failed: {err}"), None))?;
    let more = page.len() > PAGE;
    page.truncate(PAGE);
    let mut result = ListResourcesResult::with_all_items(page.iter().map(resource).collect());
    if more {
        result.next_cursor = page.last().map(|meta| meta.id.to_string());
    }
    Ok(result)
}

fn invalid_cursor(cursor: &str) -> McpError {
    McpError::invalid_params(
        format!("Invalid cursor {cursor:?}: pass the nextCursor of the previous page"),
        None,
    )
}

fn resource(meta: &ArtifactMeta) -> Resource {
    let name = if meta.label.is_empty() { meta.id.to_string() } else { meta.label.clone() };
    let amount = if meta.binary {
        format::size(meta.stored_bytes)
    } else {
        format!("{} lines", meta.total_lines)
    };
    let state = if meta.complete { "" } else { ", still being written" };
    Resource::new(meta.id.uri(), name)
        .with_description(format!("{} output, {amount}{state}", meta.tool))
        .with_mime_type(meta.mime.clone())
        .with_size(meta.stored_bytes)
}

pub async fn read(toolkit: &Toolkit, uri: &str) -> Result<ReadResourceResult, McpError> {
    let store = toolkit.artifacts().cloned().map_err(|reason| {
        McpError::resource_not_found(format!("artifacts are off: {reason}"), None)
    })?;
    let uri = uri.to_owned();
    tokio::task::spawn_blocking(move || read_blocking(&store, &uri)).await.map_err(|err| {
        McpError::internal_error(format!("reading the artifact failed: {err}"), None)
    })?
}

fn read_blocking(store: &ArtifactStore, uri: &str) -> Result<ReadResourceResult, McpError> {
    if !uri.starts_with(SCHEME) {
        return Err(McpError::invalid_params(format!("Invalid artifact URI: {uri}"), None));
    }
    let (id, query) = ArtifactId::parse(uri).map_err(mcp_error)?;
    let selection = match query.filter(|q| !q.is_empty()) {
        Some(query) => Selection::from_query(&query).map_err(mcp_error)?,
        None => Selection::Whole,
    };
    // A binary artifact over the limit is answered from its metadata, without reading it.
    let meta = store.meta(&id).map_err(mcp_error)?;
    if meta.binary && meta.stored_bytes > BLOB_LIMIT {
        return Ok(too_large(uri, &id, &meta.mime, meta.stored_bytes));
    }
    let contents = match store.read(&id, &selection).map_err(mcp_error)? {
        ReadOutput::Text(text) => ResourceContents::text(text, uri),
        ReadOutput::Binary { mime, bytes } => {
            if bytes.len() as u64 > BLOB_LIMIT {
                return Ok(too_large(uri, &id, &mime, bytes.len() as u64));
            }
            let blob = base64::engine::general_purpose::STANDARD.encode(&bytes);
            ResourceContents::blob(blob, uri).with_mime_type(mime)
        }
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

fn too_large(uri: &str, id: &ArtifactId, mime: &str, bytes: u64) -> ReadResourceResult {
    let text = format!(
        "{} is {} of {mime}, over the {} limit for MCP resources. Read it with the CLI: \
         execkit artifact {id} --raw > <file>",
        id.uri(),
        format::size(bytes),
        format::size(BLOB_LIMIT),
    );
    ReadResourceResult::new(vec![ResourceContents::text(text, uri)])
}

fn mcp_error(err: ArtifactError) -> McpError {
    let message = err.to_string();
    match err {
        ArtifactError::NotFound(_) | ArtifactError::Disabled(_) => {
            McpError::resource_not_found(message, None)
        }
        ArtifactError::InvalidUri(_) | ArtifactError::BadSelection(_) => {
            McpError::invalid_params(message, None)
        }
        ArtifactError::Io { .. } => McpError::internal_error(message, None),
    }
}
