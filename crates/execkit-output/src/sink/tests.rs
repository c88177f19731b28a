use proptest::prelude::*;

use super::*;
use crate::artifact::{ReadOutput, Selection, StoreLimits};

fn config() -> SinkConfig {
    SinkConfig::from_limits(&Limits::default())
}

fn small() -> SinkConfig {
    SinkConfig {
        head_bytes: 100,
        head_lines: 3,
        tail_bytes: 200,
        tail_lines: 4,
        line_bytes: 80,
        spill_from_start: false,
    }
}

fn run(config: SinkConfig, input: &[u8], chunk: usize) -> SinkSummary {
    let mut sink = OutputSink::new(config, None, Some("artifacts are off".to_string()));
    for part in input.chunks(chunk.max(1)) {
        sink.push(part);
    }
    let summary = sink.finish();
    assert!(summary.totals.balanced(), "{:?}", summary.totals);
    summary
}

fn store(dir: &tempfile::TempDir) -> ArtifactStore {
    ArtifactStore::open(dir.path(), StoreLimits::default()).unwrap()
}

fn spill(store: &ArtifactStore) -> Option<Spill> {
    Some(Spill { store: store.clone(), tool: "bash".into(), label: "test".into() })
}

#[test]
fn small_output_is_the_window_with_no_footer() {
    let s = run(config(), b"hello\nworld\n", 1000);
    assert_eq!(s.body, "hello\nworld\n");
    assert_eq!(s.footer, None);
    assert_eq!(s.truncation, None);
    assert_eq!((s.totals.total_lines, s.totals.total_bytes, s.totals.shown_lines), (2, 12, 2));
}

#[test]
fn empty_stream() {
    let s = run(config(), b"", 1);
    assert_eq!((s.body.as_str(), s.footer, s.totals.total_lines), ("", None, 0));
}

#[test]
fn crlf_lone_cr_and_progress_frames() {
    let s = run(config(), b"a\r\nb\rc\r\n", 1000);
    assert_eq!(s.body, "a\nc\n");
    assert_eq!(s.totals.total_lines, 2);
    assert_eq!(s.totals.stripped_bytes, 2);
    assert_eq!(s.totals.overwritten_bytes, 2);
    let frames: Vec<u8> = (0..=100).flat_map(|i| format!("\r{i:3}%").into_bytes()).collect();
    let s = run(config(), &frames, 7);
    assert_eq!(s.body, "100%");
    assert_eq!(s.totals.total_lines, 1);
    assert_eq!(s.totals.overwritten_bytes, frames.len() as u64 - 4);
}

#[test]
fn ansi_sequences_and_controls_are_stripped() {
    let input = b"\x1b[31mred\x1b[0m \x1b]0;title\x07ok\x1b]8;;http://x\x1b\\link\x1bPdcs\x1b\\\x1b(B\x1b=x\x01\x7f\n";
    let s = run(config(), input, 1000);
    assert_eq!(s.body, "red oklinkx\n");
    assert_eq!(s.totals.stripped_bytes + s.totals.total_bytes, input.len() as u64);
    let c1 = "a\u{85}b\n";
    assert_eq!(run(config(), c1.as_bytes(), 1).body, "ab\n");
}

#[test]
fn c1_string_controls_drop_their_payload() {
    let input =
        b"x\xc2\x9d52;c;ZXZpbA==\xc2\x9cy \xc2\x9b31mred \xc2\x90dcs\x1b\\z\xc2\x9d0;t\x07!\n";
    for chunk in [1, 3, 1000] {
        let s = run(config(), input, chunk);
        assert_eq!(s.body, "xy red z!\n", "chunk {chunk}");
        assert_eq!(s.totals.stripped_bytes + s.totals.total_bytes, input.len() as u64);
    }
}

#[test]
fn a_lf_ends_an_unfinished_escape() {
    let numbers: String = (1..=100).map(|i| format!("{i}\n")).collect();
    let input = format!("START\x1b]0;{numbers}\x07END\n");
    for chunk in [1, 7, 1 << 16] {
        let s = run(config(), input.as_bytes(), chunk);
        assert_eq!(s.body, format!("START]0;{numbers}END\n"), "chunk {chunk}");
        assert_eq!(s.totals.total_lines, 101);
    }
    let s = run(config(), b"a\x1b[?1\n2\n3\n", 1);
    assert_eq!(s.body, "a[?1\n2\n3\n");
    let s = run(config(), "b\u{9d}title\nnext\n".as_bytes(), 1);
    assert_eq!(s.body, "btitle\nnext\n");
    let s = run(config(), b"c\x1b]0;t\r\nnext\n", 1);
    assert_eq!(s.body, "c]0;t\nnext\n");
}

#[test]
fn backspace_overstrike_collapses() {
    let s = run(config(), b"N\x08NA\x08AM\x08ME\x08E\n", 1);
    assert_eq!(s.body, "NAME\n");
    assert_eq!(s.totals.overwritten_bytes, 8);
}

#[test]
fn invalid_utf8_becomes_replacement_and_waits_across_chunks() {
    let s = run(config(), b"ok \xff\xfe and a longer end\n", 1);
    assert_eq!(s.body, "ok \u{FFFD}\u{FFFD} and a longer end\n");
    let emoji = "x😀y\n".as_bytes();
    assert_eq!(run(config(), emoji, 1).body, "x😀y\n");
    let s = run(config(), b"the tail of it \xf0\x9f", 1);
    assert_eq!(s.body, "the tail of it \u{FFFD}");
}

#[test]
fn unterminated_osc_is_released_after_4_kib() {
    let mut input = b"\x1b]".to_vec();
    input.extend(std::iter::repeat_n(b'z', 5 * 1024));
    input.extend_from_slice(b"\nnext\n");
    let s = run(config(), &input, 333);
    assert!(s.body.starts_with("]zzz"), "{}", &s.body[..20]);
    assert!(s.body.ends_with("next\n"));
    assert_eq!(s.totals.stripped_bytes, 1);
}

#[test]
fn omitted_marker_and_footer_are_exact() {
    let input: String = (1..=20).map(|i| format!("{i}\n")).collect();
    let s = run(small(), input.as_bytes(), 5);
    assert_eq!(s.body, "1\n2\n3\n[... 13 lines (33 bytes) omitted ...]\n17\n18\n19\n20\n");
    assert_eq!(
        s.footer.as_deref(),
        Some("[Showing lines 1-3 and 17-20 of 20; full output not saved (artifacts are off)]")
    );
    let t = s.truncation.unwrap();
    assert_eq!(t.shown_ranges, [(1, 3), (17, 20)]);
    assert!(!t.byte_limited);
}

#[test]
fn long_lines_are_cut_without_showing_lines() {
    let line = "x".repeat(1400) + "\n";
    let s = run(config(), line.as_bytes(), 100);
    assert_eq!(s.body, format!("{} [... +376 bytes]\n", "x".repeat(1024)));
    assert_eq!(
        s.footer.as_deref(),
        Some(
            "[1 long lines cut at 1024 bytes (376 bytes not shown); full output not saved (artifacts are off)]"
        )
    );
    assert_eq!((s.totals.cut_lines, s.totals.cut_bytes), (1, 376));
}

#[test]
fn cut_respects_char_boundaries() {
    let line = "é".repeat(60) + "\n";
    let s = run(small(), line.as_bytes(), 1);
    assert_eq!(s.body, format!("{} [... +40 bytes]\n", "é".repeat(40)));
}

#[test]
fn byte_limit_is_reported() {
    let input: String = (0..50).map(|i| format!("{i:040}\n")).collect();
    let s = run(small(), input.as_bytes(), 64);
    let footer = s.footer.unwrap();
    assert!(footer.contains("(byte limit 300 bytes)"), "{footer}");
    assert!(s.truncation.unwrap().byte_limited);
}

#[test]
fn line_window_arguments() {
    let base = config();
    let tail = base.clone().with_line_window(None, Some(5));
    assert_eq!((tail.head_lines, tail.tail_lines, tail.tail_bytes), (0, 5, 70 * 1024));
    let both = base.clone().with_line_window(Some(1), Some(3));
    assert_eq!((both.head_bytes, both.tail_bytes), (70 * 1024 / 4, 70 * 1024 * 3 / 4));
    let input: String = (1..=10).map(|i| format!("{i}\n")).collect();
    let s = run(base.clone().with_line_window(Some(0), Some(0)), input.as_bytes(), 3);
    assert_eq!(s.body, "[... 10 lines (21 bytes) omitted ...]\n");
    assert!(s.footer.unwrap().starts_with("[Showing no lines of 10;"));
    let s = run(base.clone().with_line_window(None, Some(2)), input.as_bytes(), 3);
    assert_eq!(s.body, "[... 8 lines (16 bytes) omitted ...]\n9\n10\n");
    assert!(s.footer.unwrap().starts_with("[Showing lines 9-10 of 10;"));
    let s = run(base.with_line_window(Some(2), None), input.as_bytes(), 3);
    assert!(s.footer.unwrap().starts_with("[Showing lines 1-2 of 10;"));
}

#[test]
fn mostly_non_text_bytes_mean_binary() {
    let mut input = vec![b'a'; 69];
    input.extend([0u8; 31]);
    let s = run(config(), &input, 7);
    assert!(s.binary);
    assert_eq!(s.body, "[binary output: 100 bytes, not shown; not saved (artifacts are off)]");
    let random: Vec<u8> =
        (0u32..4096).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    assert!(run(config(), &random, 512).binary);
    let utf16: Vec<u8> = "hello world\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    assert!(run(config(), &utf16, 3).binary);
}

#[test]
fn a_stray_nul_or_latin1_stays_text() {
    let s = run(config(), b"result: 42\n\0\ndone\n", 1);
    assert!(!s.binary);
    assert_eq!(s.body, "result: 42\n\u{2400}\ndone\n");
    let mut page: Vec<u8> = (1..=100).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
    page.insert(50, 0);
    let s = run(config(), &page, 64);
    assert!(!s.binary);
    assert_eq!(s.totals.total_lines, 100);
    assert!(s.body.contains('\u{2400}'));
    let s = run(config(), b"Gr\xfc\xdfe aus M\xfcnchen\n", 1);
    assert_eq!(s.body, "Gr\u{FFFD}\u{FFFD}e aus M\u{FFFD}nchen\n");
    assert_eq!(run(config(), b"a\xff\xfeb ok\n", 1000).body, "a\u{FFFD}\u{FFFD}b ok\n");
    let print0 = b"./a\0./b c\0./d\0";
    assert_eq!(run(config(), print0, 2).body, "./a\u{2400}./b c\u{2400}./d\u{2400}");
}

#[test]
fn nul_after_the_probe_is_shown() {
    let mut input = b"a".repeat(90);
    input.push(b'\n');
    let mut input = input.repeat(100);
    input.push(b'a');
    input.push(0);
    input.push(b'\n');
    let s = run(config(), &input, 4096);
    assert!(!s.binary);
    assert!(s.body.ends_with("a\u{2400}\n"));
    assert_eq!(s.totals.stripped_bytes, 0);
}

#[test]
fn spill_writes_the_whole_stream_to_the_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let input: String = (1..=5000).map(|i| format!("line {i}\r\n")).collect();
    let mut sink = OutputSink::new(config(), spill(&store), None);
    for part in input.as_bytes().chunks(1000) {
        sink.push(part);
    }
    let s = sink.finish();
    let id = s.artifact.clone().unwrap();
    let footer = s.footer.unwrap();
    assert_eq!(
        footer,
        format!("[Showing lines 1-500 and 2501-5000 of 5000; full output: {}]", id.uri())
    );
    let stored = std::fs::read(store.out_path(&id).unwrap()).unwrap();
    assert_eq!(stored, input.replace("\r\n", "\n").as_bytes());
    let meta = store.meta(&id).unwrap();
    assert!(meta.complete);
    assert_eq!((meta.total_lines, meta.total_bytes), (5000, stored.len() as u64));
}

#[test]
fn no_artifact_when_everything_fits() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let mut sink = OutputSink::new(config(), spill(&store), None);
    sink.push(b"short\n");
    let s = sink.finish();
    assert_eq!(s.artifact, None);
    assert!(store.list(10).is_empty());
}

#[test]
fn spill_from_start_and_spill_now() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let mut sink =
        OutputSink::new(SinkConfig { spill_from_start: true, ..config() }, spill(&store), None);
    assert!(sink.artifact().is_some());
    sink.push(b"a\n");
    let s = sink.finish();
    let id = s.artifact.unwrap();
    assert_eq!(std::fs::read(store.out_path(&id).unwrap()).unwrap(), b"a\n");

    let mut sink = OutputSink::new(config(), spill(&store), None);
    sink.push(b"before\n");
    assert!(sink.artifact().is_none());
    sink.spill_now();
    sink.push(b"after\n");
    let id = sink.artifact().cloned().unwrap();
    let s = sink.finish();
    assert_eq!(s.artifact, Some(id.clone()));
    assert_eq!(std::fs::read(store.out_path(&id).unwrap()).unwrap(), b"before\nafter\n");
}

#[test]
fn capped_artifact_keeps_head_gap_and_tail() {
    let dir = tempfile::tempdir().unwrap();
    let mib = 1024 * 1024;
    let store = ArtifactStore::open(
        dir.path(),
        StoreLimits { max_bytes: 2 * mib, ..StoreLimits::default() },
    )
    .unwrap();
    let input: String = (1..=300_000).map(|i| format!("{i:09}\n")).collect();
    let mut sink = OutputSink::new(config(), spill(&store), None);
    for part in input.as_bytes().chunks(65536) {
        sink.push(part);
    }
    let s = sink.finish();
    assert!(s.totals.balanced());
    let id = s.artifact.unwrap();
    let meta = store.meta(&id).unwrap();
    let gap = meta.gap.clone().unwrap();
    // 10-byte lines: the first MiB holds lines 1..=104857 whole and 6 bytes of the next.
    assert_eq!(gap.first_line, 104_858);
    assert_eq!(gap.last_line, 300_000 - 104_857);
    let footer = s.footer.unwrap();
    assert!(
        footer.ends_with(&format!(
            "full output: {} (capped at 2 MiB: lines 104858-195143 not kept)]",
            id.uri()
        )),
        "{footer}"
    );
    let ReadOutput::Text(text) =
        store.read(&id, &Selection::Lines { from: 300_000, to: 300_000 }).unwrap()
    else {
        panic!("text expected")
    };
    assert!(text.starts_with("300000000\n") || text.starts_with("000300000\n"), "{text}");
    let ReadOutput::Text(text) =
        store.read(&id, &Selection::Lines { from: 104_857, to: 104_857 }).unwrap()
    else {
        panic!("text expected")
    };
    assert!(text.starts_with("000104857\n"), "{text}");
    let ReadOutput::Text(text) =
        store.read(&id, &Selection::Lines { from: 150_000, to: 150_010 }).unwrap()
    else {
        panic!("text expected")
    };
    assert!(text.starts_with("lines 104858-195143 were not kept (artifact cap 2 MiB)\n"));
    let ReadOutput::Text(text) = store.read(&id, &Selection::Tail(2)).unwrap() else { panic!() };
    assert!(text.starts_with("000299999\n000300000"), "{text}");
}

#[test]
fn snapshot_shows_the_newest_lines_and_the_current_one() {
    let mut sink = OutputSink::new(config(), None, None);
    let input: String = (1..=100).map(|i| format!("{i}\n")).collect();
    sink.push(input.as_bytes());
    sink.push(b"50%\r60%");
    let snap = sink.snapshot();
    // 39 finished lines plus the unfinished one.
    assert!(snap.starts_with("62\n"), "{snap}");
    assert!(snap.ends_with("100\n60%"), "{snap}");
    sink.push(b"\r70");
    assert!(sink.snapshot().ends_with("100\n70%"));
    assert_eq!(sink.total_lines(), 101);
}

#[test]
fn floods_of_short_lines_agree_across_chunk_sizes() {
    // Pipe-sized chunks hold thousands of lines, so the window counts most of them without
    // rendering; 7-byte chunks render every line. Both must show the same.
    let mut input = Vec::new();
    for i in 0..40_000 {
        input.extend_from_slice(format!("\x1b[31m{i}\x1b[0m frame\r{i}%\r\n").as_bytes());
    }
    input.extend_from_slice(b"partial\rlast");
    for config in [config(), small(), config().with_line_window(Some(3), Some(5))] {
        let mut snaps = Vec::new();
        let mut summaries = Vec::new();
        for chunk in [65_536, 7] {
            let mut sink = OutputSink::new(config.clone(), None, None);
            for part in input.chunks(chunk) {
                sink.push(part);
            }
            snaps.push((sink.snapshot(), sink.total_lines(), sink.total_bytes()));
            summaries.push(sink.finish());
        }
        assert_eq!(snaps[0], snaps[1]);
        assert!(snaps[0].0.ends_with("39999%frame\nlastial"), "{}", snaps[0].0);
        assert_eq!(summaries[0], summaries[1]);
        assert!(summaries[0].totals.balanced());
    }
}

#[test]
fn huge_single_line_stays_bounded() {
    let chunk = vec![b'a'; 1 << 20];
    let mut sink = OutputSink::new(config(), None, None);
    for _ in 0..64 {
        sink.push(&chunk);
    }
    let s = sink.finish();
    assert_eq!(s.totals.total_lines, 1);
    assert_eq!(s.totals.cut_bytes, (64 << 20) - 1024);
    assert!(s.body.len() < 1100);
}

/// A corpus mixing multi-byte text, escapes, CR frames, CRLF, BS and invalid bytes.
fn corpus() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"plain text ".to_vec()),
        Just("é😀ß".as_bytes().to_vec()),
        Just(b"\x1b[1;31m".to_vec()),
        Just(b"\x1b]0;t\x07".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\x08".to_vec()),
        Just(b"\xff".to_vec()),
        Just(b"\t".to_vec()),
        "[a-z]{0,120}".prop_map(String::into_bytes),
    ];
    prop::collection::vec(piece, 0..80).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn chunking_never_changes_the_summary(input in corpus(), cuts in prop::collection::vec(0usize..4000, 0..12)) {
        let whole = run(small(), &input, usize::MAX);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (input.len() + 1)).collect();
        cuts.sort_unstable();
        let mut sink = OutputSink::new(small(), None, Some("artifacts are off".to_string()));
        let mut last = 0;
        for cut in cuts.into_iter().chain([input.len()]) {
            sink.push(&input[last..cut]);
            last = cut;
        }
        let split = sink.finish();
        prop_assert!(split.totals.balanced());
        prop_assert_eq!(&whole, &split);
        prop_assert_eq!(&run(small(), &input, 1), &whole);
    }
}

#[test]
fn long_csi_is_treated_alike_in_any_chunking() {
    for params in [4093, 4094, 4095, 5000] {
        let mut input = b"a\x1b[".to_vec();
        input.extend(std::iter::repeat_n(b'1', params));
        input.extend_from_slice(b"mz\n");
        let whole = run(config(), &input, usize::MAX);
        assert_eq!(run(config(), &input, 1), whole, "{params} parameter bytes");
        assert_eq!(run(config(), &input, 4096), whole, "{params} parameter bytes");
    }
}

#[test]
fn ten_megabytes_of_cr_frames_collapse_to_the_last() {
    let mut input = Vec::new();
    let mut i = 0u64;
    while input.len() < 10_000_000 {
        input.extend_from_slice(format!("\rframe {i:08}").as_bytes());
        i += 1;
    }
    let s = run(config(), &input, 65536);
    assert_eq!(s.body, format!("frame {:08}", i - 1));
    assert_eq!(s.totals.total_lines, 1);
    assert_eq!(s.totals.overwritten_bytes, input.len() as u64 - 14);
    let footer = format!(
        "[{} bytes overwritten by carriage returns; full output not saved (artifacts are off)]",
        input.len() - 14
    );
    assert_eq!(s.footer, Some(footer));
}

#[test]
fn capped_single_line_keeps_prefix_gap_line_and_last_mib() {
    let dir = tempfile::tempdir().unwrap();
    let mib = 1usize << 20;
    let limits = StoreLimits { max_bytes: 2 * mib as u64, ..StoreLimits::default() };
    let store = ArtifactStore::open(dir.path(), limits).unwrap();
    let mut sink = OutputSink::new(config(), spill(&store), None);
    let chunk: Vec<u8> = (0..mib).map(|i| b'a' + (i % 26) as u8).collect();
    for _ in 0..5 {
        sink.push(&chunk);
    }
    let s = sink.finish();
    assert_eq!(s.totals.cut_bytes, 5 * mib as u64 - 1024);
    let id = s.artifact.unwrap();
    let stored = std::fs::read(store.out_path(&id).unwrap()).unwrap();
    let gap = format!("\n[... lines 1-1 ({} bytes) not kept: artifact cap 2 MiB ...]\n", 3 * mib);
    assert_eq!(&stored[..mib], &chunk[..]);
    assert_eq!(&stored[mib..mib + gap.len()], gap.as_bytes());
    assert_eq!(&stored[mib + gap.len()..], &chunk[..]);
    assert!(s.footer.unwrap().ends_with("(capped at 2 MiB: lines 1-1 not kept)]"));
}

#[test]
fn sinks_and_stores_move_between_threads() {
    fn assert_send<T: Send + Sync>() {}
    assert_send::<OutputSink>();
    assert_send::<ArtifactStore>();
    assert_eq!(StoreLimits::from_limits(&Limits::default()), StoreLimits::default());
}

#[test]
fn a_carriage_return_overwrites_in_place_and_keeps_the_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    for chunk in [1, 4, 1000] {
        let mut sink = OutputSink::new(config(), spill(&store), None);
        for part in b"keep me\rERASED\nabcdef\rXY\n".chunks(chunk) {
            sink.push(part);
        }
        let s = sink.finish();
        assert!(s.totals.balanced(), "{:?}", s.totals);
        assert_eq!(s.body, "ERASEDe\nXYcdef\n");
        assert_eq!(s.totals.overwritten_bytes, 10);
        let id = s.artifact.clone().expect("an overwrite keeps the artifact");
        assert_eq!(
            s.footer.as_deref(),
            Some(&*format!(
                "[10 bytes overwritten by carriage returns; full output: {}]",
                id.uri()
            ))
        );
        let raw = std::fs::read(store.out_path(&id).unwrap()).unwrap();
        assert_eq!(raw, b"keep me\rERASED\nabcdef\rXY\n");
        let ReadOutput::Text(read) = store.read(&id, &Selection::Whole).unwrap() else {
            panic!("text artifact")
        };
        assert_eq!(read, "ERASEDe\nXYcdef");
        let grep = Selection::Grep { pattern: "e$".into(), context: 0, max: 10 };
        let ReadOutput::Text(found) = store.read(&id, &grep).unwrap() else { panic!("text") };
        assert!(found.starts_with("1:ERASEDe\n"), "{found}");
    }
}

#[test]
fn a_carriage_return_that_overwrites_nothing_keeps_no_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let mut sink = OutputSink::new(config(), spill(&store), None);
    sink.push(b"\rstart\r\nend\r");
    let s = sink.finish();
    assert_eq!((s.body.as_str(), s.footer, s.artifact), ("start\nend", None, None));
}

#[test]
fn capped_artifact_reads_say_what_was_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mib = 1024 * 1024;
    let limits = StoreLimits { max_bytes: 2 * mib, ..StoreLimits::default() };
    let store = ArtifactStore::open(dir.path(), limits).unwrap();
    let input: String = (1..=300_000).map(|i| format!("{i:09}\n")).collect();
    let mut sink = OutputSink::new(config(), spill(&store), None);
    for part in input.as_bytes().chunks(65536) {
        sink.push(part);
    }
    let id = sink.finish().artifact.unwrap();
    let uri = id.uri();
    let read = |sel: Selection| match store.read(&id, &sel) {
        Ok(ReadOutput::Text(text)) => text,
        other => panic!("{other:?}"),
    };
    let last_line = |text: String| text.lines().last().unwrap_or_default().to_string();
    let gap = "lines 104858-195143 were not kept (artifact cap 2 MiB)";
    let grep = |pattern: &str| Selection::Grep { pattern: pattern.into(), context: 0, max: 10 };
    assert_eq!(
        read(grep("^0001500")),
        format!("[0 matches in the 209714 kept lines of 300000; {gap}]")
    );
    assert!(last_line(read(grep("^0000000"))).ends_with(&format!("more; {gap}]")));
    assert_eq!(
        read(Selection::Lines { from: 150_000, to: 150_010 }),
        format!("{gap}\n[next: {uri}?lines=195144-197643]")
    );
    assert_eq!(
        last_line(read(Selection::Lines { from: 104_850, to: 104_870 })),
        format!("[Showing lines 104850-104858 of 300000; next: {uri}?lines=195144-197643]")
    );
    assert_eq!(last_line(read(Selection::Tail(10))), "[Showing lines 299991-300000 of 300000]");
    assert_eq!(
        last_line(read(Selection::Tail(200_000))),
        format!("[Showing lines 297501-300000 of 300000; next: {uri}?lines=100001-102500]")
    );
}
