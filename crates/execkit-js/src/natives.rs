//! Native functions behind the prelude (`ek` in prelude.js): output frames, files, the
//! environment, timers and tool calls. Cells never see this object; they see the prelude's
//! globals.

use crate::executor::executor;
use crate::wire::{emit, emit_stream};
use base64::Engine as _;
use boa_engine::builtins::promise::PromiseState;
use boa_engine::native_function::NativeFunction;
use boa_engine::object::ObjectInitializer;
use boa_engine::object::builtins::JsPromise;
use boa_engine::{
    Context, JsArgs, JsNativeError, JsObject, JsResult, JsString, JsValue, js_string,
};
use execkit_protocol::kernel::{KernelFrame, StreamName};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long past the cell's deadline a tool call may wait for its reply (E41).
const TOOL_REPLY_GRACE: Duration = Duration::from_secs(5);

type Native = fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>;

const NATIVES: [(&str, Native, usize); 12] = [
    ("isClass", is_class, 1),
    ("write", write_stream, 2),
    ("display", display, 1),
    ("readFile", read_file, 3),
    ("writeFile", write_file, 4),
    ("environ", environ, 0),
    ("toolCall", tool_call, 2),
    ("setTimer", set_timer, 3),
    ("clearTimer", clear_timer, 1),
    ("promiseState", promise_state, 1),
    ("utf8Encode", utf8_encode, 1),
    ("utf8Decode", utf8_decode, 1),
];

/// The `ek` object handed to the prelude.
pub fn natives(context: &mut Context) -> JsObject {
    let mut init = ObjectInitializer::new(context);
    for (name, f, len) in NATIVES {
        init.function(NativeFunction::from_fn_ptr(f), JsString::from(name), len);
    }
    init.build()
}

/// A JS string as UTF-8, lone surrogates replaced with U+FFFD (E29).
pub fn rust_string(value: &JsValue, context: &mut Context) -> JsResult<String> {
    Ok(value.to_string(context)?.to_std_string_lossy())
}

fn type_error(message: impl Into<String>) -> boa_engine::JsError {
    JsNativeError::typ().with_message(message.into()).into()
}

fn plain_error(message: impl Into<String>) -> boa_engine::JsError {
    JsNativeError::error().with_message(message.into()).into()
}

fn write_stream(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let fd = args.get_or_undefined(0).to_u32(context)?;
    let text = rust_string(args.get_or_undefined(1), context)?;
    if let Some(cell) = executor().current_cell() {
        let name = if fd == 2 { StreamName::Stderr } else { StreamName::Stdout };
        emit_stream(cell.id, name, &text);
    }
    Ok(JsValue::undefined())
}

fn display(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let text = rust_string(args.get_or_undefined(0), context)?;
    let data: serde_json::Map<String, Value> =
        serde_json::from_str(&text).map_err(|e| type_error(format!("display: {e}")))?;
    if let Some(cell) = executor().current_cell() {
        emit(&KernelFrame::Display { id: cell.id, data, metadata: None });
    }
    Ok(JsValue::undefined())
}

fn resolve(path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    }
}

fn read_file(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let path = rust_string(args.get_or_undefined(0), context)?;
    let offset = args.get_or_undefined(1).to_number(context)?.max(1.0) as usize;
    let limit = args.get_or_undefined(2).to_number(context)?;
    let full = resolve(&path);
    if full.is_dir() {
        return Err(plain_error(format!("{path} is a directory")));
    }
    let bytes = std::fs::read(&full).map_err(|e| plain_error(format!("{path}: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    let lines = text.split_inclusive('\n').skip(offset - 1);
    let picked: String =
        if limit >= 0.0 { lines.take(limit as usize).collect() } else { lines.collect() };
    Ok(JsString::from(picked.as_str()).into())
}

fn write_file(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let path = rust_string(args.get_or_undefined(0), context)?;
    let data = rust_string(args.get_or_undefined(1), context)?;
    let is_base64 = args.get_or_undefined(2).to_boolean();
    let append = args.get_or_undefined(3).to_boolean();
    let bytes = if is_base64 {
        base64::engine::general_purpose::STANDARD
            .decode(data.as_bytes())
            .map_err(|e| type_error(format!("write: {e}")))?
    } else {
        data.into_bytes()
    };
    let full = resolve(&path);
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent).map_err(|e| plain_error(format!("{path}: {e}")))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(&full)
        .map_err(|e| plain_error(format!("{path}: {e}")))?;
    file.write_all(&bytes).map_err(|e| plain_error(format!("{path}: {e}")))?;
    Ok(JsString::from(full.to_string_lossy().as_ref()).into())
}

// The kernel is a program of its own: its environment is the filtered one the host gave it,
// and `env` shows exactly that to the cell.
#[allow(clippy::disallowed_methods)]
fn environ(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let vars: std::collections::BTreeMap<String, String> = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .collect();
    let text = serde_json::to_string(&vars).unwrap_or_else(|_| "{}".into());
    Ok(JsString::from(text.as_str()).into())
}

/// Sends `tool_call` and returns a promise that resolves with `{result}` or `{error}`.
fn tool_call(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let name = rust_string(args.get_or_undefined(0), context)?;
    let (promise, resolvers) = JsPromise::new_pending(context);
    let ex = executor();
    let Some(cell) = ex.current_cell() else {
        let reply = json!({"error": "tool calls are only possible while a cell is running"});
        let value = JsValue::from_json(&reply, context)?;
        resolvers.resolve.call(&JsValue::undefined(), &[value], context)?;
        return Ok(promise.into());
    };
    let call_args = match args.get_or_undefined(1) {
        v if v.is_undefined() => json!({}),
        v => v.to_json(context)?.unwrap_or_else(|| json!({})),
    };
    let deadline = cell.deadline.unwrap_or_else(Instant::now) + TOOL_REPLY_GRACE;
    let call_id = ex.add_tool_call(name.clone(), resolvers.resolve, deadline);
    emit(&KernelFrame::ToolCall { id: cell.id, call_id, name, args: call_args });
    Ok(promise.into())
}

fn set_timer(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let callback = args
        .get_or_undefined(0)
        .as_callable()
        .and_then(|o| boa_engine::object::builtins::JsFunction::from_object(o.clone()))
        .ok_or_else(|| type_error("the timer callback must be a function"))?;
    let ms = args.get_or_undefined(1).to_number(context)?;
    let repeat = args.get_or_undefined(2).to_boolean();
    let id = executor().add_timer(callback, if ms.is_finite() { ms } else { 0.0 }, repeat);
    Ok(JsValue::from(id as f64))
}

fn clear_timer(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let id = args.get_or_undefined(0).to_number(context)?;
    if id.is_finite() && id >= 0.0 {
        executor().clear_timer(id as u64);
    }
    Ok(JsValue::undefined())
}

fn promise_state(_: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let state = args
        .get_or_undefined(0)
        .as_object()
        .and_then(|o| JsPromise::from_object(o.clone()).ok())
        .map_or("unknown", |p| match p.state() {
            PromiseState::Pending => "pending",
            PromiseState::Fulfilled(_) => "fulfilled",
            PromiseState::Rejected(_) => "rejected",
        });
    Ok(js_string!(state).into())
}

/// A string's UTF-8 bytes as a binary string (one char per byte).
fn utf8_encode(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let text = rust_string(args.get_or_undefined(0), context)?;
    let units: Vec<u16> = text.as_bytes().iter().map(|&b| u16::from(b)).collect();
    Ok(JsString::from(units.as_slice()).into())
}

/// A binary string (one char per byte) decoded as UTF-8 with replacement.
fn utf8_decode(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let units = args.get_or_undefined(0).to_string(context)?.to_vec();
    let bytes: Vec<u8> = units.iter().map(|&u| (u & 0xff) as u8).collect();
    Ok(JsString::from(String::from_utf8_lossy(&bytes).as_ref()).into())
}

/// Whether a value is a class constructor (boa's own display knows; `toString` does not).
fn is_class(_: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let shown = args.get_or_undefined(0).display().to_string();
    Ok(JsValue::from(shown.starts_with("[class")))
}
