use std::os::unix::fs::{MetadataExt, PermissionsExt};

use super::*;

fn open(dir: &Path) -> ArtifactStore {
    ArtifactStore::open(dir, StoreLimits::default()).unwrap()
}

fn text(out: ReadOutput) -> String {
    match out {
        ReadOutput::Text(text) => text,
        ReadOutput::Binary { .. } => panic!("expected text"),
    }
}

fn numbered(n: u64) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn parse_accepts_exactly_eight_lowercase_hex_digits() {
    let (id, query) = ArtifactId::parse("artifact://3f9a0c12?lines=1-5").unwrap();
    assert_eq!((id.as_str(), query.as_deref()), ("3f9a0c12", Some("lines=1-5")));
    assert_eq!(id.uri(), "artifact://3f9a0c12");
    assert_eq!(ArtifactId::parse("3f9a0c12").unwrap().1, None);
    for bad in [
        "artifact://3F9A0C12",
        "artifact://../x",
        "artifact://3f9a0c12/../../etc/passwd",
        "3f9a0c1",
        "",
        "artifact://",
    ] {
        let err = ArtifactId::parse(bad).unwrap_err();
        assert_eq!(err.to_string(), format!("Invalid artifact URI: {bad}"));
    }
}

#[test]
fn queries_parse_and_reject_with_the_ox13_texts() {
    assert_eq!(Selection::from_query("").unwrap(), Selection::Whole);
    assert_eq!(Selection::from_query("lines=2-9").unwrap(), Selection::Lines { from: 2, to: 9 });
    assert_eq!(Selection::from_query("head=3").unwrap(), Selection::Head(3));
    assert_eq!(Selection::from_query("tail=0").unwrap(), Selection::Tail(0));
    assert_eq!(
        Selection::from_query("grep=err%20or+x&context=2&max=5").unwrap(),
        Selection::Grep { pattern: "err or x".into(), context: 2, max: 5 }
    );
    let err = |q: &str| Selection::from_query(q).unwrap_err().to_string();
    assert_eq!(err("lines=5-2"), "lines=5-2: start after end");
    assert_eq!(err("lines=0-3"), "lines start at 1");
    assert_eq!(err("tail=-1"), "tail must be ≥ 0 (got -1)");
    assert!(err("grep=(").starts_with("Invalid grep pattern: "), "{}", err("grep=("));
    assert_eq!(err("grep=a&max=0"), "max must be 1..10000 (got 0)");
    assert_eq!(err("grep=a&context=21"), "context must be 0..20 (got 21)");
    assert_eq!(err("head=1&tail=1"), "use one of lines, head, tail, grep");
    assert!(err("bogus=1").starts_with("unknown query key"));
}

#[test]
fn options_select_like_the_query_and_never_both() {
    let options = |f: fn(&mut SelectionOptions)| {
        let mut o = SelectionOptions::default();
        f(&mut o);
        o
    };
    let grep = options(|o| {
        o.grep = Some("err or".into());
        o.context = Some(2);
    });
    let query = Selection::from_query("grep=err%20or&context=2").unwrap();
    assert_eq!(grep.resolve(None).unwrap(), query);
    let lines = options(|o| o.lines = Some("2-9".into()));
    assert_eq!(lines.resolve(None).unwrap(), Selection::Lines { from: 2, to: 9 });
    assert_eq!(SelectionOptions::default().resolve(None).unwrap(), Selection::Whole);
    assert_eq!(SelectionOptions::default().resolve(Some("head=3")).unwrap(), Selection::Head(3));
    let errors = [
        (options(|o| o.head = Some(1)), Some("tail=2")),
        (options(|o| (o.head, o.tail) = (Some(1), Some(2))), None),
        (options(|o| o.context = Some(1)), None),
        (options(|o| (o.grep, o.context) = (Some("x".into()), Some(21))), None),
        (options(|o| o.grep = Some("(".into())), None),
    ];
    for (options, query) in errors {
        let err = options.resolve(query).unwrap_err();
        assert!(matches!(err, ArtifactError::BadSelection(_)), "{options:?}: {err}");
    }
}

#[test]
fn directory_is_created_private_and_files_are_0600() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a/b");
    let store = open(&dir);
    assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
    let id = store.put("eval", b"hello\n", "text/plain", "greeting").unwrap();
    for path in [store.out_file(&id), store.json_file(&id)] {
        assert_eq!(fs::metadata(path).unwrap().mode() & 0o777, 0o600);
    }
    let meta = store.meta(&id).unwrap();
    assert_eq!(
        (meta.tool.as_str(), meta.label.as_str(), meta.complete),
        ("eval", "greeting", true)
    );
    assert_eq!((meta.total_bytes, meta.total_lines, meta.stored_bytes), (6, 1, 6));
    assert!(meta.finished.is_some());
}

#[test]
fn loose_mode_is_tightened_and_symlinks_or_files_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let loose = tmp.path().join("loose");
    fs::create_dir(&loose).unwrap();
    fs::set_permissions(&loose, fs::Permissions::from_mode(0o777)).unwrap();
    open(&loose);
    assert_eq!(fs::metadata(&loose).unwrap().mode() & 0o777, 0o700);

    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&loose, &link).unwrap();
    let err = ArtifactStore::open(&link, StoreLimits::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("artifact directory {} is not private (it is a symlink)", link.display())
    );

    let file = tmp.path().join("file");
    fs::write(&file, b"").unwrap();
    let err = ArtifactStore::open(&file, StoreLimits::default()).unwrap_err();
    assert!(matches!(err, ArtifactError::Disabled(_)));
}

#[test]
fn foreign_owner_is_refused() {
    if fsutil::current_uid() != 0 {
        println!("SKIPPED foreign_owner_is_refused: needs root to chown");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("other");
    fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(4242), None).unwrap();
    let err = ArtifactStore::open(&dir, StoreLimits::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("artifact directory {} is not private (owned by uid 4242, not 0)", dir.display())
    );
}

#[test]
fn id_collision_retries_with_a_new_id() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(tmp.path());
    fs::write(tmp.path().join("0000abcd.out"), b"taken").unwrap();
    let mut ids = [0xabcd_u32, 0x1234].into_iter();
    let writer =
        store.create_with("bash", "x", "text/plain", &mut || ids.next().unwrap_or(7)).unwrap();
    assert_eq!(writer.id().as_str(), "00001234");
    assert_eq!(fs::read(tmp.path().join("0000abcd.out")).unwrap(), b"taken");
}

#[test]
fn unknown_id_is_not_found() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(tmp.path());
    let (id, _) = ArtifactId::parse("0badc0de").unwrap();
    let err = store.read(&id, &Selection::Whole).unwrap_err();
    assert_eq!(
        err.to_string(),
        "artifact 0badc0de not found (expired or deleted; artifacts are kept 7 days, 2 GiB in total)"
    );
    assert!(store.out_path(&id).is_err());
    assert!(store.open_raw(&id).is_err());
}

#[test]
fn whole_read_is_windowed_and_names_the_next_page() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(tmp.path());
    let id = store.put("bash", numbered(80_000).as_bytes(), "text/plain", "seq").unwrap();
    let out = text(store.read(&id, &Selection::Whole).unwrap());
    let uri = id.uri();
    assert!(out.starts_with("line 1\n"));
    assert!(out.contains("\n[... 77000 lines ("));
    assert!(out.ends_with(&format!(
        "line 80000\n[Showing lines 1-500 and 77501-80000 of 80000; next: {uri}?lines=501-3000]"
    )));
}

#[test]
fn line_head_and_tail_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(tmp.path());
    let id = store.put("bash", numbered(80_000).as_bytes(), "text/plain", "seq").unwrap();
    let uri = id.uri();
    let out = text(store.read(&id, &Selection::Lines { from: 1, to: 80_000 }).unwrap());
    assert!(out.ends_with(&format!(
        "line 2500\n[Showing lines 1-2500 of 80000; next: {uri}?lines=2501-5000]"
    )));
    let out = text(store.read(&id, &Selection::Lines { from: 10, to: 11 }).unwrap());
    assert_eq!(
        out,
        format!("line 10\nline 11\n[Showing lines 10-11 of 80000; next: {uri}?lines=12-2511]")
    );
    let out = text(store.read(&id, &Selection::Head(2)).unwrap());
    assert_eq!(
        out,
        format!("line 1\nline 2\n[Showing lines 1-2 of 80000; next: {uri}?lines=3-2502]")
    );
    let out = text(store.read(&id, &Selection::Tail(2)).unwrap());
    assert_eq!(out, "line 79999\nline 80000\n[Showing lines 79999-80000 of 80000]");
    // A tail longer than a page: the next read goes forward from the first line asked for.
    let out = text(store.read(&id, &Selection::Tail(3000)).unwrap());
    assert!(
        out.ends_with(&format!(
            "[Showing lines 77501-80000 of 80000; next: {uri}?lines=77001-77500]"
        )),
        "{}",
        out.lines().last().unwrap_or_default()
    );
    let err = store.read(&id, &Selection::Lines { from: 80_001, to: 80_002 }).unwrap_err();
    assert_eq!(err.to_string(), format!("{uri} has 80000 lines"));
    let small = store.put("bash", b"a\r\nb\rc\n", "text/plain", "cr").unwrap();
    assert_eq!(text(store.read(&small, &Selection::Whole).unwrap()), "a\nc");
    assert_eq!(text(store.read(&small, &Selection::Tail(5)).unwrap()), "a\nc");
}

#[test]
fn grep_marks_matches_context_and_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(tmp.path());
    let id = store.put("bash", numbered(30).as_bytes(), "text/plain", "seq").unwrap();
    let sel = Selection::Grep { pattern: "^line (5|20)$".into(), context: 1, max: 200 };
    assert_eq!(
        text(store.read(&id, &sel).unwrap()),
        "4-line 4\n5:line 5\n6-line 6\n--\n19-line 19\n20:line 20\n21-line 21\n[2 matches in 30 lines]"
    );
    let sel = Selection::Grep { pattern: "line 1".into(), context: 0, max: 2 };
    assert_eq!(
        text(store.read(&id, &sel).unwrap()),
        "1:line 1\n10:line 10\n[2 matches in 30 lines; stopped at max=2, raise max for more]"
    );
    let bad = Selection::Grep { pattern: "(".into(), context: 0, max: 1 };
    assert!(store.read(&id, &bad).unwrap_err().to_string().starts_with("Invalid grep pattern: "));
}

#[test]
fn binary_reads_return_bytes_and_open_raw_is_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(tmp.path());
    let bytes: Vec<u8> = (0..=255).collect();
    let id = store.put("eval", &bytes, "image/png", "plot").unwrap();
    assert_eq!(
        store.read(&id, &Selection::Whole).unwrap(),
        ReadOutput::Binary { mime: "image/png".into(), bytes: bytes.clone() }
    );
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut store.open_raw(&id).unwrap(), &mut raw).unwrap();
    assert_eq!(raw, bytes);
}

#[test]
fn a_file_being_written_says_so_and_gc_leaves_it() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ArtifactStore::open(
        tmp.path(),
        StoreLimits { max_bytes: 1 << 20, store_bytes: 16 << 20, max_age_s: 3600 },
    )
    .unwrap();
    let mut writer = store.create("bash", "live", "text/plain").unwrap();
    writer.write(&vec![b'x'; 70_000]);
    writer.write(b"\nmore\n");
    let id = writer.id().clone();
    let out = text(store.read(&id, &Selection::Tail(1)).unwrap());
    assert!(out.ends_with("(still being written)"), "{out}");
    let report = gc::run(&store, fsutil::now_secs() + 10 * 86_400);
    assert!(report.deleted.is_empty());
    writer.finish();
    let out = text(store.read(&id, &Selection::Tail(1)).unwrap());
    assert_eq!(out, "more\n[Showing lines 2-2 of 2]");
}

#[test]
fn gc_by_age_by_size_and_orphans() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = StoreLimits { max_bytes: 1 << 20, store_bytes: 16 << 20, max_age_s: 3600 };
    let store = ArtifactStore::open(tmp.path(), limits).unwrap();
    let old = store.put("bash", b"old\n", "text/plain", "old").unwrap();
    let mut meta = store.meta(&old).unwrap();
    meta.created -= 7200;
    store.write_meta(&meta).unwrap();
    let fresh = store.put("bash", b"fresh\n", "text/plain", "fresh").unwrap();
    let report = store.gc();
    assert_eq!(report.deleted, vec![old.clone()]);
    assert!(matches!(store.meta(&old), Err(ArtifactError::NotFound(_))));
    assert!(store.meta(&fresh).is_ok());

    // By size: three 6 MiB artifacts in a 16 MiB store; the oldest goes.
    let big = vec![b'y'; 6 << 20];
    let mut ids = Vec::new();
    for i in 0..3u64 {
        let mut writer = store.create("bash", "big", "application/octet-stream").unwrap();
        writer.set_binary();
        writer.write(&big[..(1 << 20)]);
        let id = writer.id().clone();
        writer.finish();
        let mut meta = store.meta(&id).unwrap();
        meta.created -= 100 - i;
        store.write_meta(&meta).unwrap();
        fs::write(store.out_file(&id), &big).unwrap();
        ids.push(id);
    }
    let report = store.gc();
    assert_eq!(report.deleted, vec![ids[0].clone()]);
    assert!(report.freed_bytes >= 6 << 20);

    // An orphan .out older than an hour goes; a fresh one stays.
    let orphan = tmp.path().join("deadbeef.out");
    fs::write(&orphan, b"x").unwrap();
    let young = tmp.path().join("cafef00d.out");
    fs::write(&young, b"x").unwrap();
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    fs::File::options().write(true).open(&orphan).unwrap().set_modified(past).unwrap();
    store.gc();
    assert!(!orphan.exists());
    assert!(young.exists());
}

#[test]
fn gc_skips_a_round_when_gc_lock_is_held() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(tmp.path());
    let lock = fs::File::create(tmp.path().join("gc.lock")).unwrap();
    assert!(fsutil::try_lock(&lock, fsutil::Lock::Exclusive).unwrap());
    assert!(store.gc().skipped_locked);
    drop(lock);
    assert!(!store.gc().skipped_locked);
}

#[test]
fn list_is_newest_first() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(tmp.path());
    let a = store.put("bash", b"a", "text/plain", "a").unwrap();
    let b = store.put("bash", b"b", "text/plain", "b").unwrap();
    let mut meta = store.meta(&a).unwrap();
    meta.created -= 10;
    store.write_meta(&meta).unwrap();
    let listed: Vec<ArtifactId> = store.list(10).into_iter().map(|m| m.id).collect();
    assert_eq!(listed, vec![b, a.clone()]);
    assert_eq!(store.list(1).len(), 1);
}

#[test]
fn label_is_capped_at_120_chars() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(tmp.path());
    let id = store.put("bash", b"a", "text/plain", &"é".repeat(200)).unwrap();
    assert_eq!(store.meta(&id).unwrap().label.chars().count(), 120);
}

#[test]
fn a_new_artifact_runs_gc_first_when_the_store_is_over_its_size() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = StoreLimits { max_bytes: 16 << 20, store_bytes: 16 << 20, max_age_s: 3600 };
    let store = ArtifactStore::open(tmp.path(), limits).unwrap();
    let big = vec![b'z'; 9 << 20];
    let first = store.put("bash", &big, "text/plain", "first").unwrap();
    let second = store.put("bash", &big, "text/plain", "second").unwrap();
    let mut meta = store.meta(&first).unwrap();
    meta.created -= 10;
    store.write_meta(&meta).unwrap();
    store.put("bash", b"small", "text/plain", "third").unwrap();
    assert!(matches!(store.meta(&first), Err(ArtifactError::NotFound(_))));
    assert!(store.meta(&second).is_ok());
}

mod grep_paths {
    use proptest::prelude::*;

    use super::super::read::{fast_grep, grep, lazy_grep, whole_doc};
    use super::*;

    fn meta(text: &str) -> ArtifactMeta {
        ArtifactMeta {
            id: ArtifactId("00000000".into()),
            tool: "t".into(),
            label: "l".into(),
            mime: "text/plain".into(),
            created: 0,
            finished: Some(0),
            complete: true,
            error: None,
            binary: false,
            total_bytes: text.len() as u64,
            total_lines: text.split_inclusive('\n').count() as u64,
            stored_bytes: text.len() as u64,
            cap_bytes: 1 << 30,
            gap: None,
        }
    }

    proptest! {
        #[test]
        fn buffer_search_agrees_with_the_line_by_line_search(
            lines in prop::collection::vec("[abc ]{0,6}", 0..40),
            final_lf in any::<bool>(),
            pattern in prop_oneof![Just("a"), Just("^b"), Just("c$"), Just("a b"), Just(r"\bab\b"), Just("x*"), Just(r"\s")],
            context in 0u64..3,
            max in 1u64..5,
        ) {
            let mut text = lines.join("\n");
            if final_lf && !text.is_empty() {
                text.push('\n');
            }
            let m = meta(&text);
            let slow = grep(&whole_doc(&text, &m, false), (pattern, context, max), None).unwrap();
            let fast = fast_grep(&text, pattern, context, max, m.total_lines).unwrap();
            prop_assert_eq!(fast, slow);
        }

        #[test]
        fn lazy_search_agrees_with_the_whole_document(
            lines in prop::collection::vec(
                prop_oneof![
                    "[abc \r\x08é]{0,8}",
                    Just("ab\r".repeat(400)),
                    Just(format!("{}\x08\rcc", "b".repeat(1030))),
                ],
                0..30,
            ),
            gap in prop::option::of((0usize..30, 0u64..5)),
            finished in any::<bool>(),
            writing in any::<bool>(),
            pattern in prop_oneof![Just("a"), Just("^b"), Just("c$"), Just(r"\bab\b"), Just("x*"), Just("é"), Just(r"\+[0-9]+ bytes")],
            context in 0u64..3,
            max in 1u64..5,
        ) {
            let mut lines = lines;
            let mut m = meta(&lines.join("\n"));
            if let Some((at, hidden)) = gap {
                let at = at.min(lines.len());
                let g = Gap { first_line: at as u64 + 1, last_line: at as u64 + 1 + hidden, bytes: 7 };
                lines.insert(at, notice::gap_line(g.first_line, g.last_line, g.bytes, m.cap_bytes));
                m.gap = Some(g);
            }
            let text = lines.join("\n");
            m.total_lines = text.split_inclusive('\n').count() as u64 + gap.map_or(0, |g| g.1);
            if !finished {
                m.finished = None;
            }
            let capped = m.gap.as_ref().map(|g| (g, m.cap_bytes));
            let whole = grep(&whole_doc(&text, &m, writing), (pattern, context, max), capped).unwrap();
            let lazy = lazy_grep(&text, &m, writing, (pattern, context, max)).unwrap();
            prop_assert_eq!(lazy, whole);
        }
    }
}

#[test]
fn remove_deletes_a_finished_artifact_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = ArtifactStore::open(&dir.path().join("a"), StoreLimits::default()).unwrap();
    let id = store.put("test", b"hello\n", "text/plain", "label").unwrap();
    store.remove(&id).unwrap();
    assert!(store.out_path(&id).is_err());
    assert!(store.remove(&id).is_err(), "a second remove finds nothing");
    let writer = store.create("test", "live", "text/plain").unwrap();
    let live = writer.id().clone();
    assert!(store.remove(&live).is_err(), "a locked writer is never removed");
    drop(writer);
}

/// A child forked while the writer was open keeps a copy of its descriptor, and the lock, until
/// it execs; a finished artifact is removable all the same.
#[test]
fn a_finished_artifact_is_removed_while_a_stray_descriptor_holds_its_lock() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("a"));
    let mut writer = store.create("test", "spill", "text/plain").unwrap();
    writer.write(b"cell output\n");
    let id = writer.id().clone();
    writer.finish();
    let stray = fsutil::open_read(&store.out_file(&id)).unwrap();
    assert!(fsutil::try_lock(&stray, fsutil::Lock::Exclusive).unwrap());
    store.remove(&id).unwrap();
    assert!(store.out_path(&id).is_err());
    assert!(store.list(10).is_empty());
}
