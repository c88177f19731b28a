use serde_json::json;

use super::*;

fn resolve(raw: Value, policy: TimeoutPolicy) -> Result<ResolvedTimeout, String> {
    resolve_timeout(Some(&raw), policy, None).map_err(|e| e.to_string())
}

#[test]
fn absent_and_null_give_the_default_silently() {
    for policy in [TimeoutPolicy::BASH, TimeoutPolicy::EVAL_CELL, TimeoutPolicy::DEBUG] {
        let got = resolve_timeout(None, policy, None).unwrap();
        assert_eq!(
            got,
            ResolvedTimeout { secs: Some(policy.default_s), requested: None, notice: None }
        );
        assert_eq!(resolve(Value::Null, policy).unwrap().secs, Some(policy.default_s));
    }
}

#[test]
fn non_numbers_are_rejected_with_the_field() {
    assert_eq!(
        resolve(json!("30"), TimeoutPolicy::BASH).unwrap_err(),
        r#"Invalid argument "timeout": expected a number of seconds (got string "30")"#
    );
    assert_eq!(
        resolve(json!(true), TimeoutPolicy::BASH).unwrap_err(),
        r#"Invalid argument "timeout": expected a number of seconds (got boolean true)"#
    );
    assert_eq!(
        resolve(json!([]), TimeoutPolicy::SSH).unwrap_err(),
        r#"Invalid argument "timeout": expected a number of seconds (got array)"#
    );
}

#[test]
fn negative_nan_and_infinite_are_rejected() {
    assert_eq!(
        resolve(json!(-1), TimeoutPolicy::BASH).unwrap_err(),
        r#"Invalid argument "timeout": must be 0 or more seconds (got -1); 0 means the longest this tool allows"#
    );
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.5] {
        let err = resolve_seconds(bad, TimeoutPolicy::BASH, 3600, false).unwrap_err();
        assert_eq!(err.field, "timeout");
        assert!(err.message.starts_with("must be 0 or more seconds (got "), "{}", err.message);
    }
}

#[test]
fn zero_means_the_maximum_or_no_deadline() {
    let bash = resolve(json!(0), TimeoutPolicy::BASH).unwrap();
    assert_eq!(bash.secs, Some(3600));
    assert_eq!(bash.requested, Some(0.0));
    assert_eq!(
        bash.notice.as_deref(),
        Some("[timeout 0 clamped to 3600 s (0 means the longest allowed)]")
    );
    assert_eq!(resolve(json!(0), TimeoutPolicy::EVAL_CELL).unwrap().secs, Some(600));
    assert_eq!(resolve(json!(0), TimeoutPolicy::DEBUG).unwrap().secs, Some(300));
    let job = resolve(json!(0), TimeoutPolicy::BASH_ASYNC).unwrap();
    assert_eq!(job.secs, None);
    assert_eq!(
        job.notice.as_deref(),
        Some("[timeout 0: no deadline; the job runs until it exits or is cancelled]")
    );
}

#[test]
fn fractions_round_up_without_notice() {
    let got = resolve(json!(0.2), TimeoutPolicy::BASH).unwrap();
    assert_eq!((got.secs, got.requested, got.notice), (Some(1), Some(0.2), None));
    let got = resolve(json!(12.5), TimeoutPolicy::BASH).unwrap();
    assert_eq!((got.secs, got.notice), (Some(13), None));
    let got = resolve(json!(0.0001), TimeoutPolicy::BASH).unwrap();
    assert_eq!((got.secs, got.notice), (Some(1), None));
    let got = resolve(json!(30), TimeoutPolicy::BASH).unwrap();
    assert_eq!((got.secs, got.requested, got.notice), (Some(30), None, None));
}

#[test]
fn range_clamps_carry_the_o4_notice() {
    let got = resolve(json!(1e308), TimeoutPolicy::BASH).unwrap();
    assert_eq!(got.secs, Some(3600));
    assert_eq!(
        got.notice.as_deref(),
        Some("[timeout 1e308 s clamped to 3600 s (allowed 1-3600 s)]")
    );
    let got = resolve(json!(3600.5), TimeoutPolicy::BASH).unwrap();
    assert_eq!(
        got.notice.as_deref(),
        Some("[timeout 3600.5 s clamped to 3600 s (allowed 1-3600 s)]")
    );
    let got = resolve(json!(2), TimeoutPolicy::DEBUG).unwrap();
    assert_eq!(got.secs, Some(5));
    assert_eq!(got.requested, Some(2.0));
    assert_eq!(got.notice.as_deref(), Some("[timeout 2 s clamped to 5 s (allowed 5-300 s)]"));
    let got = resolve(json!(1000.1234), TimeoutPolicy::EVAL_CELL).unwrap();
    assert_eq!(
        got.notice.as_deref(),
        Some("[timeout 1000.123 s clamped to 600 s (allowed 1-600 s)]")
    );
    let got = resolve(json!(2e9), TimeoutPolicy::SSH).unwrap();
    assert_eq!(got.notice.as_deref(), Some("[timeout 2e9 s clamped to 3600 s (allowed 1-3600 s)]"));
}

#[test]
fn max_timeout_override_lowers_every_maximum_but_not_below_min() {
    let got = resolve_timeout(Some(&json!(0)), TimeoutPolicy::BASH, Some(60)).unwrap();
    assert_eq!(got.secs, Some(60));
    assert_eq!(
        got.notice.as_deref(),
        Some("[timeout 0 clamped to 60 s (0 means the longest allowed)]")
    );
    let got = resolve_timeout(Some(&json!(100)), TimeoutPolicy::BASH, Some(60)).unwrap();
    assert_eq!(got.notice.as_deref(), Some("[timeout 100 s clamped to 60 s (allowed 1-60 s)]"));
    let got = resolve_timeout(None, TimeoutPolicy::BASH, Some(60)).unwrap();
    assert_eq!(got.secs, Some(60));
    let got = resolve_timeout(Some(&json!(0)), TimeoutPolicy::DEBUG, Some(2)).unwrap();
    assert_eq!(got.secs, Some(5));
    let got = resolve_timeout(Some(&json!(0)), TimeoutPolicy::BASH_ASYNC, Some(120)).unwrap();
    assert_eq!(got.secs, Some(120));
}

#[test]
fn line_counts_clamp_at_100000() {
    assert_eq!(clamp_lines("tail", 5), (5, None));
    assert_eq!(clamp_lines("tail", 100_000), (100_000, None));
    assert_eq!(
        clamp_lines("tail", 500_000),
        (100_000, Some("[tail 500000 clamped to 100000 (allowed 0-100000)]".to_string()))
    );
}

#[test]
fn knobs_default_clamp_and_reject() {
    let mut notes = Notes::default();
    assert_eq!(Limits::from_lookup(&Lookup::default(), &mut notes).unwrap(), Limits::default());
    assert!(notes.is_empty());

    let env = Lookup::from_vars([
        ("EXECKIT_OUTPUT_LINE_BYTES", "10"),
        ("EXECKIT_KILL_GRACE_MS", "-3"),
        ("EXECKIT_PTY_COLS", " 200 "),
        ("EXECKIT_MAX_TIMEOUT", "90"),
    ]);
    let limits = Limits::from_lookup(&env, &mut notes).unwrap();
    assert_eq!(limits.line_bytes, 80);
    assert_eq!(limits.kill_grace_ms, 0);
    assert_eq!(limits.pty_cols, 200);
    assert_eq!(limits.max_timeout_s, Some(90));
    assert_eq!(
        notes.lines(),
        [
            "EXECKIT_OUTPUT_LINE_BYTES=10 is outside 80..65536; using 80",
            "EXECKIT_KILL_GRACE_MS=-3 is outside 0..10000; using 0",
        ]
    );

    let bad = Lookup::from_vars([("EXECKIT_DRAIN_MAX_MS", "2s")]);
    let err = Limits::from_lookup(&bad, &mut Notes::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"EXECKIT_DRAIN_MAX_MS="2s" is not a whole number from 100 to 30000"#
    );
}
