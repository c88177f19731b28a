use proptest::prelude::*;

use super::*;

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

fn decode_all(decoder: &mut FrameDecoder, bytes: &[u8]) -> Vec<Vec<u8>> {
    decoder.push(bytes);
    std::iter::from_fn(|| decoder.next_frame()).collect()
}

#[test]
fn clean_frames_decode_without_resync() {
    let mut d = FrameDecoder::default();
    let mut bytes = frame(r#"{"a":1}"#);
    bytes.extend(frame(r#"{"b":2}"#));
    let frames = decode_all(&mut d, &bytes);
    assert_eq!(frames, vec![br#"{"a":1}"#.to_vec(), br#"{"b":2}"#.to_vec()]);
    assert_eq!(d.stats().resyncs, 0);
}

#[test]
fn banner_before_first_frame_is_one_resync() {
    let mut d = FrameDecoder::default();
    let mut bytes = b"garbage\nWelcome to the adapter v1\r\n".to_vec();
    bytes.extend(frame("{}"));
    assert_eq!(decode_all(&mut d, &bytes), vec![b"{}".to_vec()]);
    assert_eq!(d.stats().resyncs, 1);
    assert_eq!(d.stats().skipped_bytes, 35);
}

#[test]
fn header_names_are_case_insensitive_and_bare_newlines_work() {
    let mut d = FrameDecoder::default();
    let bytes = b"content-LENGTH: 2\nContent-Type: x\n\n{}".to_vec();
    assert_eq!(decode_all(&mut d, &bytes), vec![b"{}".to_vec()]);
    assert_eq!(d.stats().resyncs, 0);
}

#[test]
fn oversized_length_is_dropped_and_the_next_frame_found() {
    let mut d = FrameDecoder::new(1024);
    let mut bytes = b"Content-Length: 4000000000\r\n\r\n".to_vec();
    bytes.extend(frame(r#"{"ok":true}"#));
    assert_eq!(decode_all(&mut d, &bytes), vec![br#"{"ok":true}"#.to_vec()]);
    assert_eq!(d.stats().resyncs, 1);
    assert!(d.buf.capacity() < 4096, "nothing was pre-allocated");
}

#[test]
fn absurd_length_overflowing_usize_is_a_resync() {
    let mut d = FrameDecoder::default();
    let mut bytes = b"Content-Length: 99999999999999999999999999\r\n\r\n".to_vec();
    bytes.extend(frame("{}"));
    assert_eq!(decode_all(&mut d, &bytes), vec![b"{}".to_vec()]);
    assert_eq!(d.stats().resyncs, 1);
}

#[test]
fn malformed_header_values_are_dropped() {
    for bad in
        ["Content-Length: ten\r\n\r\n", "Content-Length:\r\n\r\n", "Content-Length: -5\r\n\r\n"]
    {
        let mut d = FrameDecoder::default();
        let mut bytes = bad.as_bytes().to_vec();
        bytes.extend(frame("{}"));
        assert_eq!(decode_all(&mut d, &bytes), vec![b"{}".to_vec()], "{bad:?}");
        assert_eq!(d.stats().resyncs, 1, "{bad:?}");
    }
}

#[test]
fn header_line_without_colon_is_bad() {
    let mut d = FrameDecoder::default();
    let mut bytes = b"Content-Length: 2\r\nnonsense\r\n\r\n".to_vec();
    bytes.extend(frame("[]"));
    assert_eq!(decode_all(&mut d, &bytes), vec![b"[]".to_vec()]);
    assert_eq!(d.stats().resyncs, 1);
}

#[test]
fn endless_header_is_cut_at_the_limit() {
    let mut d = FrameDecoder::default();
    let mut bytes = b"Content-Length: 2\r\nX: ".to_vec();
    bytes.extend(std::iter::repeat_n(b'a', MAX_HEADER_BYTES * 2));
    bytes.extend(b"\r\n\r\n");
    bytes.extend(frame("{}"));
    assert_eq!(decode_all(&mut d, &bytes), vec![b"{}".to_vec()]);
    assert_eq!(d.stats().resyncs, 1);
}

#[test]
fn garbage_without_header_keeps_memory_bounded() {
    let mut d = FrameDecoder::default();
    for _ in 0..1000 {
        d.push(&[b'x'; 4096]);
        assert!(d.next_frame().is_none());
    }
    assert!(d.buf.len() - d.start < HEADER.len());
    d.push(&frame("{}"));
    assert_eq!(d.next_frame(), Some(b"{}".to_vec()));
    assert_eq!(d.stats().resyncs, 1);
}

#[test]
fn header_split_across_reads_is_found() {
    let mut d = FrameDecoder::default();
    let bytes = frame(r#"{"x":"y"}"#);
    let mut frames = Vec::new();
    for byte in &bytes {
        frames.extend(decode_all(&mut d, std::slice::from_ref(byte)));
    }
    assert_eq!(frames, vec![br#"{"x":"y"}"#.to_vec()]);
    assert_eq!(d.stats().resyncs, 0);
}

#[test]
fn bad_utf8_body_is_still_a_frame_for_the_decoder_to_drop() {
    let mut d = FrameDecoder::default();
    let mut bytes = b"Content-Length: 3\r\n\r\n\xff\xfe\xfd".to_vec();
    bytes.extend(frame("{}"));
    assert_eq!(decode_all(&mut d, &bytes), vec![b"\xff\xfe\xfd".to_vec(), b"{}".to_vec()]);
    assert!(crate::wire::decode(b"\xff\xfe\xfd").is_err());
}

fn bodies() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[ -~]{0,40}", 1..8)
}

proptest! {
    #[test]
    fn any_chunking_yields_the_same_frames(bodies in bodies(), cuts in prop::collection::vec(1usize..50, 1..40)) {
        let mut bytes = Vec::new();
        for body in &bodies {
            bytes.extend(frame(body));
        }
        let mut d = FrameDecoder::default();
        let mut frames = Vec::new();
        let mut rest = bytes.as_slice();
        let mut cuts = cuts.into_iter().cycle();
        while !rest.is_empty() {
            let n = cuts.next().unwrap_or(1).min(rest.len());
            frames.extend(decode_all(&mut d, &rest[..n]));
            rest = &rest[n..];
        }
        let expected: Vec<Vec<u8>> = bodies.iter().map(|b| b.as_bytes().to_vec()).collect();
        prop_assert_eq!(frames, expected);
        prop_assert_eq!(d.stats().resyncs, 0);
    }

    #[test]
    fn garbage_before_a_frame_never_hides_it(garbage in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut bytes = garbage.clone();
        bytes.extend(b"\r\n");
        bytes.extend(frame(r#"{"seq":1}"#));
        let mut d = FrameDecoder::new(1 << 20);
        let frames = decode_all(&mut d, &bytes);
        prop_assert_eq!(frames.last().cloned(), Some(br#"{"seq":1}"#.to_vec()));
    }
}
