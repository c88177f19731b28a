//! A `job` call's raw params resolved into what to do, or an argument error naming the field.

use execkit_protocol::ArgError;
use execkit_protocol::job::JobParams;

/// At most this many ids in one list (J10).
const MAX_IDS: usize = 100;

/// A validated `job` call.
pub(crate) struct Request {
    pub poll: Option<Vec<u64>>,
    pub cancel: Vec<u64>,
    pub list: bool,
}

fn parse_ids(field: &str, ids: Option<Vec<String>>) -> Result<Option<Vec<u64>>, ArgError> {
    let Some(ids) = ids else { return Ok(None) };
    if ids.len() > MAX_IDS {
        return Err(ArgError::new(field, format!("at most {MAX_IDS} job ids (got {})", ids.len())));
    }
    let mut out: Vec<u64> = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let number = id
            .strip_prefix("bg_")
            .filter(|n| (1..=9).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| {
                ArgError::new(
                    format!("{field}[{i}]"),
                    format!(
                        "{} is not a job id (expected bg_<n>)",
                        serde_json::Value::from(id.as_str())
                    ),
                )
            })?;
        if !out.contains(&number) {
            out.push(number);
        }
    }
    Ok(Some(out))
}

pub(crate) fn validate(params: JobParams) -> Result<Request, ArgError> {
    let list = params.list.unwrap_or(false);
    if list && (params.poll.is_some() || params.cancel.is_some()) {
        return Err(ArgError::new("list", "cannot be combined with \"poll\" or \"cancel\""));
    }
    let poll = parse_ids("poll", params.poll)?;
    let cancel = parse_ids("cancel", params.cancel)?.unwrap_or_default();
    Ok(Request { poll, cancel, list })
}
