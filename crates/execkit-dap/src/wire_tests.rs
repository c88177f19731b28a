use serde_json::json;

use super::*;

fn event(value: serde_json::Value) -> EventKind {
    match decode(value.to_string().as_bytes()) {
        Ok(Message::Event(event)) => event.kind,
        other => panic!("not an event: {other:?}"),
    }
}

#[test]
fn stopped_event_is_typed() {
    let kind = event(json!({"seq": 5, "type": "event", "event": "stopped",
        "body": {"reason": "breakpoint", "threadId": 1, "allThreadsStopped": true}}));
    let EventKind::Known(KnownEvent::Stopped(body)) = kind else { panic!("{kind:?}") };
    assert_eq!((body.reason.as_str(), body.thread_id), ("breakpoint", Some(1)));
}

#[test]
fn events_without_body_parse() {
    let kind = event(json!({"seq": 1, "type": "event", "event": "initialized"}));
    assert_eq!(kind, EventKind::Known(KnownEvent::Initialized));
    let kind = event(json!({"seq": 2, "type": "event", "event": "terminated"}));
    assert_eq!(kind, EventKind::Known(KnownEvent::Terminated(None)));
}

#[test]
fn vendor_events_land_in_other() {
    let kind = event(json!({"seq": 3, "type": "event", "event": "debugpySockets",
        "body": {"sockets": [{"host": "127.0.0.1", "port": 5678}]}}));
    assert_eq!(kind.name(), "debugpySockets");
    assert!(matches!(kind, EventKind::Other { body: Some(_), .. }));
}

#[test]
fn known_event_with_an_odd_body_is_kept_not_failed() {
    let kind =
        event(json!({"seq": 3, "type": "event", "event": "exited", "body": {"exitCode": "x"}}));
    assert!(matches!(kind, EventKind::Other { ref event, .. } if event == "exited"));
}

#[test]
fn numeric_and_string_module_ids_pass_through() {
    let body: ModulesResponse = serde_json::from_value(json!({"modules": [
        {"id": 7, "name": "a"}, {"id": "b-1", "name": "b"}]}))
    .unwrap();
    assert_eq!(body.modules[0].id, Id::Number(7));
    assert_eq!(body.modules[1].id, Id::String("b-1".into()));
    assert_eq!(serde_json::to_value(&body.modules[0].id).unwrap(), json!(7));
}

#[test]
fn reverse_requests_are_typed_or_other() {
    let request = Request {
        seq: 9,
        command: "runInTerminal".into(),
        arguments: Some(json!({"kind": "integrated", "cwd": "/tmp", "args": ["python3", "x.py"],
            "env": {"A": "1", "B": null}})),
    };
    let ReverseRequest::Known(KnownReverseRequest::RunInTerminal(args)) =
        ReverseRequest::from_request(&request)
    else {
        panic!()
    };
    assert_eq!(args.args, ["python3", "x.py"]);
    let odd = Request { seq: 10, command: "vendorThing".into(), arguments: None };
    assert_eq!(ReverseRequest::from_request(&odd).command(), "vendorThing");
}

#[test]
fn outgoing_request_has_type_and_omits_absent_fields() {
    let message = Message::Request(Request { seq: 1, command: "threads".into(), arguments: None });
    let bytes = encode(&message);
    let text = String::from_utf8(bytes).unwrap();
    assert_eq!(
        text,
        "Content-Length: 46\r\n\r\n{\"type\":\"request\",\"seq\":1,\"command\":\"threads\"}"
    );
}

#[test]
fn bodies_that_are_not_messages_are_errors() {
    for body in
        [&b"[1,2]"[..], b"{\"seq\":1}", b"not json", b"{\"type\":\"nope\",\"seq\":1}", b"\xff"]
    {
        assert!(decode(body).is_err(), "{body:?}");
    }
}

#[test]
fn error_text_fills_format_placeholders() {
    let response = Response {
        seq: 1,
        request_seq: 1,
        success: false,
        command: "evaluate".into(),
        message: None,
        body: Some(
            json!({"error": {"format": "Unable to find {name}", "variables": {"name": "zz"}}}),
        ),
    };
    assert_eq!(response.error_text(), "Unable to find zz");
}

#[test]
fn capabilities_keep_unknown_flags() {
    let caps: Capabilities = serde_json::from_value(json!({
        "supportsConfigurationDoneRequest": true, "supportTerminateDebuggee": true,
        "exceptionBreakpointFilters": [{"filter": "raised", "label": "Raised"}]}))
    .unwrap();
    assert!(caps.flag("supportsConfigurationDoneRequest"));
    assert!(caps.flag("supportTerminateDebuggee"));
    assert!(!caps.flag("supportsDataBreakpoints"));
}

#[test]
fn response_reads_the_snake_case_request_seq() {
    let body = br#"{"seq":4,"type":"response","request_seq":2,"command":"next","success":true}"#;
    let Ok(Message::Response(response)) = decode(body) else { panic!() };
    assert_eq!(response.request_seq, 2);
    let text = String::from_utf8(encode(&Message::Response(response))).unwrap();
    assert!(text.contains("\"request_seq\":2"), "{text}");
}

#[test]
fn capability_aliases_fill_the_real_name() {
    let caps: Capabilities =
        serde_json::from_value(json!({"supportTerminateDebuggee": true})).unwrap();
    let aliases =
        [("supportTerminateDebuggee".to_string(), "supportsTerminateDebuggee".to_string())]
            .into_iter()
            .collect();
    assert!(caps.with_aliases(&aliases).flag("supportsTerminateDebuggee"));
}
