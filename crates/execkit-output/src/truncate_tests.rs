use proptest::prelude::*;

use super::*;

fn check(t: &Truncation) {
    assert_eq!(t.shown_bytes + t.omitted_bytes + t.cut_bytes, t.total_bytes, "{t:?}");
    assert_eq!(t.shown_lines + t.omitted_lines, t.total_lines, "{t:?}");
}

#[test]
fn head_keeps_whole_lines_from_the_start() {
    let (out, t) = truncate_head("a\nbb\nccc\n", 2, 100);
    assert_eq!(out, "a\nbb\n");
    assert_eq!((t.shown_lines, t.omitted_lines, t.omitted_bytes), (2, 1, 4));
    assert_eq!(t.shown_ranges, [(1, 2)]);
    assert!(!t.byte_limited);
    let (out, t) = truncate_head("a\nbb\nccc\n", 10, 4);
    assert_eq!(out, "a\n");
    assert!(t.byte_limited);
    check(&t);
}

#[test]
fn tail_keeps_whole_lines_from_the_end() {
    let (out, t) = truncate_tail("a\nbb\nccc", 2, 100);
    assert_eq!(out, "bb\nccc");
    assert_eq!(t.shown_ranges, [(2, 3)]);
    assert_eq!(t.total_lines, 3);
    check(&t);
}

#[test]
fn an_oversized_first_or_last_line_is_shown_cut() {
    let (out, t) = truncate_head("héllo world\nx\n", 5, 3);
    assert_eq!(out, "hé [... +9 bytes]\n");
    assert_eq!((t.cut_lines, t.cut_bytes, t.shown_bytes), (1, 9, 4));
    assert!(t.byte_limited);
    check(&t);
    let (out, t) = truncate_tail("x\nabcdef", 5, 2);
    assert_eq!(out, "ab [... +4 bytes]");
    assert_eq!(t.shown_ranges, [(2, 2)]);
    check(&t);
}

#[test]
fn budgets_of_zero_still_show_something() {
    let (out, t) = truncate_head("abc\n", 0, 0);
    assert_eq!(out, " [... +3 bytes]\n");
    check(&t);
    let (out, t) = truncate_middle("abc\ndef\n", 0, 0, 0, 0);
    assert!(!out.is_empty());
    check(&t);
    let (out, t) = truncate_head("abc\n", 0, 10);
    assert_eq!(out, "abc\n");
    check(&t);
}

#[test]
fn empty_and_lone_lf() {
    let (out, t) = truncate_middle("", 1, 1, 1, 1);
    assert_eq!((out.as_str(), t.total_lines, t.total_bytes), ("", 0, 0));
    let (out, t) = truncate_head("\n", 5, 5);
    assert_eq!((out.as_str(), t.total_lines), ("\n", 1));
    let (out, t) = truncate_tail("", 0, 0);
    assert_eq!(out, "");
    check(&t);
}

#[test]
fn middle_marks_the_omitted_lines_exactly() {
    let text: String = (1..=10).map(|i| format!("{i}\n")).collect();
    let (out, t) = truncate_middle(&text, 2, 100, 3, 100);
    assert_eq!(out, "1\n2\n[... 5 lines (10 bytes) omitted ...]\n8\n9\n10\n");
    assert_eq!(t.shown_ranges, [(1, 2), (8, 10)]);
    assert_eq!((t.omitted_lines, t.omitted_bytes), (5, 10));
    check(&t);
}

#[test]
fn touching_windows_return_the_text_unchanged() {
    let text = "1\n2\n3\n4\n";
    let (out, t) = truncate_middle(text, 2, 100, 2, 100);
    assert_eq!(out, text);
    assert_eq!(t.shown_ranges, [(1, 4)]);
    let (out, _) = truncate_middle(text, 3, 100, 3, 100);
    assert_eq!(out, text);
}

#[test]
fn cut_line_respects_char_boundaries() {
    assert_eq!(cut_line("short\n", 10), ("short\n".to_string(), 0));
    assert_eq!(cut_line("a€b", 2), ("a [... +4 bytes]".to_string(), 4));
    assert_eq!(cut_line("a€b\n", 4), ("a€ [... +1 bytes]\n".to_string(), 1));
    assert_eq!(cut_line("ab", 0), (" [... +2 bytes]".to_string(), 2));
}

proptest! {
    #[test]
    fn invariant_and_char_boundaries(
        text in "(\\PC|\n|é|😀){0,60}",
        hl in 0u64..6, hb in 0u64..40, tl in 0u64..6, tb in 0u64..40,
    ) {
        for (out, t) in [
            truncate_head(&text, hl, hb),
            truncate_tail(&text, tl, tb),
            truncate_middle(&text, hl, hb, tl, tb),
        ] {
            check(&t);
            prop_assert_eq!(t.total_bytes, text.len() as u64);
            if !text.is_empty() {
                prop_assert!(!out.is_empty());
            }
            prop_assert!(t.shown_bytes <= out.len() as u64);
        }
        let (cut, dropped) = cut_line(&text, hb as usize);
        prop_assert!(dropped <= text.len() as u64);
        if dropped > 0 {
            let kept = text.strip_suffix('\n').unwrap_or(&text).len() as u64 - dropped;
            prop_assert!(kept <= hb);
            prop_assert!(text.starts_with(&cut[..kept as usize]));
        }
    }
}
