//! Every model-visible text, pinned. A change here changes what agents read.

use super::*;

#[test]
fn clamp_texts() {
    let texts = [
        timeout_not_number("string \"30\""),
        timeout_negative(-1.0),
        timeout_clamped(1e308, 3600, 1, 3600),
        timeout_clamped(3600.5, 3600, 1, 3600),
        timeout_clamped(0.1234, 5, 5, 300),
        timeout_zero(600),
        timeout_async_zero(),
        lines_clamped("tail", 500_000, 100_000),
    ];
    insta::assert_snapshot!(texts.join("\n"));
}

#[test]
fn window_and_footer_texts() {
    let uri = "artifact://3f9a0c12";
    let texts = [
        omitted_marker(77_000, 1_234_567),
        footer(&[showing_range(4001, 5000, 5000), full_output(uri)]),
        footer(&[showing_head_tail(500, 2801, 5300, 5300), full_output(uri)]),
        footer(&[cut_part(2, 1024, 81_920), full_output(uri)]),
        footer(&[
            showing_none(10) + &byte_limit(70 * 1024),
            full_output_not_saved("artifact directory /x is not private (it is a symlink)"),
        ]),
        footer(&[
            cut_part(1, 1024, 376),
            full_output_incomplete("No space left on device", 1_048_576, uri),
        ]),
        footer(&[
            showing_range(1, 500, 9000),
            full_output_capped(uri, 100 << 20, 1_000_001, 1_900_000),
        ]),
        cut_suffix(376),
        binary_output(65_536, Some(uri), None),
        binary_output(65_536, None, Some("artifacts are off")),
        no_output(),
        footer(&[overwritten_part(7), full_output(uri)]),
        image_shown("image/png", 640, 480, 23_962),
        image_too_large(10_000, 10_000, Ok(uri)),
        image_too_large(10_000, 10_000, Err("artifacts are off")),
    ];
    insta::assert_snapshot!(texts.join("\n"));
}

#[test]
fn artifact_texts() {
    let uri = "artifact://3f9a0c12";
    let texts = [
        gap_line(1_000_001, 1_900_000, 123_456_789, 100 << 20),
        gap_read(1_000_001, 1_900_000, 100 << 20),
        artifact_not_found("3f9a0c12", 604_800, 2 << 30),
        artifact_line_count(uri, 80_000),
        still_being_written(),
        footer(&[showing_range(1, 2500, 80_000), next_read(uri, 2501, 5000)]),
        footer(&[grep_summary(200, 80_000, true), grep_more(12)]),
        footer(&[grep_summary(1, 10, false)]),
        footer(&[
            grep_summary_kept(3, 9_100_000, 20_000_000, false),
            gap_read(1_000_001, 11_900_000, 100 << 20),
        ]),
        dir_not_private("/home/u/.execkit/artifacts", "owned by uid 4242, not 1000"),
        dir_unusable("/ro/artifacts", "Read-only file system"),
        sel_start_after_end(5, 2),
        sel_lines_start_at_one(),
        sel_not_negative("tail", "-1"),
        sel_bad_number("head", "x"),
        sel_max_range("0"),
        sel_context_range("21"),
        sel_bad_lines("a-b"),
        sel_unknown_key("bogus"),
        sel_conflict(),
        sel_context_without_grep(),
        grep_invalid("unclosed group"),
    ];
    insta::assert_snapshot!(texts.join("\n"));
}

#[test]
fn echo_rules() {
    assert_eq!(echo_number(1e308), "1e308");
    assert_eq!(echo_number(1e9), "1e9");
    assert_eq!(echo_number(999_999_999.5), "999999999.5");
    assert_eq!(echo_number(12.0), "12");
    assert_eq!(echo_number(0.0001), "0");
    assert_eq!(echo_number(3600.5), "3600.5");
    assert_eq!(echo_number(1.23456), "1.235");
    assert_eq!(echo_number(-1.0), "-1");
}
