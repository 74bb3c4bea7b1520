//! The streaming path (`open::parse_file`: structure by positioned reads, payload streamed
//! once in chunks) gives exactly what the in-memory `parse` gives: the same JSON document for
//! every control and public file, the same failure (code, offset, message) for mutated and
//! truncated bytes, and it refuses before reading payloads it does not need.

use crate::common;
use nbg_lab::NbgFamily;

use nbg_lab::nbg::parse::{Options, parse};
use nbg_lab::nbg::stream::{self, FileSource, ReadAt};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Memory and streamed results, as comparable values.
fn both(
    bytes: &[u8],
) -> (
    Result<serde_json::Value, nbg_lab::Failure>,
    Result<serde_json::Value, nbg_lab::Failure>,
) {
    let memory = parse(bytes).map(|g| g.to_json());
    let streamed = nbg_lab::nbg::open::parse_source(
        Arc::new(FileSource::from_bytes(bytes.to_vec())),
        Options::default(),
    )
    .expect("bytes in memory never fail to read")
    .map(|g| g.to_json());
    (memory, streamed)
}

fn assert_same(name: &str, bytes: &[u8]) {
    let (memory, streamed) = both(bytes);
    assert_eq!(
        memory, streamed,
        "{name}: streamed parse differs from the in-memory parse"
    );
}

/// The files on disk, parsed by `parse_file`, against `parse` of the bytes read whole.
fn assert_file_same(path: &std::path::Path) {
    let bytes = std::fs::read(path).expect("readable file");
    let memory = parse(&bytes).map(|g| g.to_json());
    let streamed = nbg_lab::nbg::open::parse_file(path, Options::default())
        .expect("readable file")
        .map(|g| g.to_json());
    assert_eq!(
        memory,
        streamed,
        "{}: streamed parse differs",
        path.display()
    );
    assert_same(&path.display().to_string(), &bytes);
    assert_crc_explain_same(path, &bytes);
    assert_image_same(path, &bytes);
}

/// `nbg image` and `nbg roundtrip` streamed (a ledger of ranges over the file, records and
/// emission read back range by range) give the in-memory ledger's document and re-encoding,
/// and the emitted stream is the file.
fn assert_image_same(path: &std::path::Path, bytes: &[u8]) {
    use nbg_lab::nbg::image::NbgImage;
    use nbg_lab::nbg::reencode::reencode;
    let memory = parse(bytes).and_then(|g| {
        NbgImage::new(&g).map(|i| (i.to_json(), serde_json::to_value(reencode(&g, &i)).unwrap()))
    });
    let source = Arc::new(FileSource::open(path).expect("readable file"));
    let parsed = nbg_lab::nbg::open::parse_source(Arc::clone(&source), Options::default())
        .expect("readable file");
    let built = parsed.and_then(|g| NbgImage::from_file(&g, Arc::clone(&source)).map(|i| (g, i)));
    assert_eq!(
        memory,
        built
            .as_ref()
            .map(|(g, i)| (i.to_json(), serde_json::to_value(reencode(g, i)).unwrap()))
            .map_err(Clone::clone),
        "{}: streamed image or re-encoding differs",
        path.display()
    );
    if let Ok((_, image)) = built {
        let mut emitted = Vec::new();
        let recon = image
            .emit_to(&mut emitted)
            .expect("an unchanged image emits");
        assert_eq!(emitted, bytes, "{}: streamed emission", path.display());
        assert_eq!(recon.bytes, bytes.len() as u64);
        assert!(source.error().is_none());
    }
}

/// `nbg crc-explain` streamed (structure by positioned reads, each segment's CRC read from the
/// file) explains a valid file exactly as the registry over its bytes in memory.
fn assert_crc_explain_same(path: &std::path::Path, bytes: &[u8]) {
    let Ok(graph) = parse(bytes) else {
        return;
    };
    let memory = nbg_lab::nbg::crc_explain::explain(&graph);
    let source = Arc::new(FileSource::open(path).expect("readable file"));
    let streamed = nbg_lab::nbg::open::parse_source(Arc::clone(&source), Options::default())
        .expect("readable file")
        .expect("valid in memory, so valid streamed");
    let data = nbg_lab::nbg::read::Data::file(Arc::clone(&source));
    let from_file = nbg_lab::nbg::crc_explain::explain_with(&streamed, |s, e| data.crc32(s, e));
    assert!(source.error().is_none());
    assert_eq!(
        serde_json::to_value(&memory).unwrap(),
        serde_json::to_value(&from_file).unwrap(),
        "{}: streamed crc-explain differs",
        path.display()
    );
}

#[test]
fn every_control_streams_like_memory() {
    for name in common::control_names() {
        assert_file_same(&common::root().join("controls").join(&name));
    }
}

#[test]
fn every_public_file_streams_like_memory() {
    // Every listed file when ../shared is there (a visible skip line otherwise), and always the 15 the
    // repository carries.
    let shared = common::root().join("../shared/corpus/v1");
    let all = common::corpus_files().unwrap_or_default();
    for (name, _, _) in &all {
        assert_file_same(&shared.join(name));
    }
    let carried = common::root().join("controls/public/v1");
    for (name, _, _) in &common::public_controls() {
        assert_file_same(&carried.join(name));
    }
}

/// A file large enough for the pipelined engine (two workers, several chunks, a short last one).
#[test]
fn large_file_pipelined_like_memory() {
    let bytes = nbg_lab::lab::synth::bulk(7, 3 * stream::CHUNK as u64 + 12_345)
        .unwrap()
        .emit()
        .unwrap();
    assert!(bytes.len() > 3 * stream::CHUNK);
    let (memory, streamed) = both(&bytes);
    let memory = memory.expect("bulk graph is valid");
    assert_eq!(Ok(memory.clone()), streamed);
    assert_eq!(
        memory["file"]["sha256"],
        serde_json::to_value(nbg_lab::digest::Hash256::of(&bytes)).unwrap()
    );
    let file = FileSource::from_bytes(bytes.clone());
    assert_eq!(
        stream::sha256(&file).unwrap(),
        nbg_lab::digest::Hash256::of(&bytes)
    );
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bulk.nb");
    std::fs::write(&path, &bytes).unwrap();
    // From the file, the payload is mapped window by window instead of read into buffers.
    let from_file = nbg_lab::nbg::open::parse_file(&path, Options::default())
        .expect("readable")
        .map(|g| g.to_json());
    assert_eq!(Ok(memory), from_file);
    let file = FileSource::open(&path).unwrap();
    assert_eq!(
        stream::sha256(&file).unwrap(),
        nbg_lab::digest::Hash256::of(&bytes)
    );
    assert_crc_explain_same(&path, &bytes);
    assert_image_same(&path, &bytes);
}

/// A file that shrinks after it was opened is an I/O error naming the chunk, never a crash
/// (a mapped page past a file's new end raises SIGBUS) and never a hash of missing bytes.
#[test]
fn a_file_truncated_while_streamed_is_an_io_error() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("shrinking.nb");
    let bytes = nbg_lab::lab::synth::bulk(5, 3 * stream::CHUNK as u64 + 777)
        .unwrap()
        .emit()
        .unwrap();
    {
        std::fs::write(&path, &bytes).unwrap();
        let file = FileSource::open(&path).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(stream::CHUNK as u64 + 4096 + 17)
            .unwrap();
        let error = stream::sha256(&file).expect_err("the file shrank");
        let message = error.to_string();
        assert!(message.contains("shrinking.nb"), "{message}");
        // The second chunk is the first one mapped past the new end.
        assert!(
            message.contains(&format!(
                "shrank while it was read (the chunk at offset {})",
                stream::CHUNK
            )),
            "{message}"
        );
    }
}

/// A reader that can be broken after the parse, as a file that fails between two reads.
struct Breakable(Vec<u8>, Arc<std::sync::atomic::AtomicBool>);

impl ReadAt for Breakable {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        if self.1.load(Ordering::Relaxed) {
            return Err(std::io::Error::other("device gone"));
        }
        self.0.read_exact_at(buf, offset)
    }
}

/// A streamed image whose file fails during emission reports the I/O error, never a
/// reconstruction, and never bytes that were not read.
#[test]
fn streamed_emission_reports_read_errors() {
    use nbg_lab::nbg::image::{EmitError, NbgImage};
    let bytes = common::control("ctc-like.nb");
    let broken = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let len = bytes.len() as u64;
    let source = Arc::new(FileSource::new(
        Box::new(Breakable(bytes, Arc::clone(&broken))),
        len,
        "ctc-like.nb".into(),
    ));
    let graph = nbg_lab::nbg::open::parse_source(Arc::clone(&source), Options::default())
        .expect("readable")
        .expect("valid");
    let image = NbgImage::from_file(&graph, Arc::clone(&source)).expect("ledger");
    broken.store(true, Ordering::Relaxed);
    match image.emit_to(&mut Vec::new()) {
        Err(EmitError::Io { message }) => assert!(message.contains("device gone"), "{message}"),
        other => panic!("expected an I/O error, got {other:?}"),
    }
    assert!(image.reconstruction().is_err());
    assert!(source.error().is_some());
}

/// Byte flips and truncations fail (or pass) identically on both paths.
#[test]
fn mutations_fail_identically() {
    let mut cases = 0;
    for name in common::control_names() {
        let original = common::control(&name);
        let stride = if original.len() < 8192 { 1 } else { 7 };
        for at in (0..original.len()).step_by(stride) {
            for pattern in [0x01u8, 0xff] {
                let mut bytes = original.clone();
                bytes[at] ^= pattern;
                assert_same(&format!("{name} ^0x{pattern:02x} at 0x{at:x}"), &bytes);
                cases += 1;
            }
        }
        for len in (0..original.len()).step_by(stride * 3) {
            assert_same(&format!("{name} truncated to {len}"), &original[..len]);
            cases += 1;
        }
    }
    let public = common::root().join("../shared/corpus/v1");
    for name in [
        "timvx-conv2d_relu_maxpool2d_fp32-001e.nb",
        "ameba-planar_to_nchw_512_lut-0014.nb",
        "ksnn-hand-tiny-000c.nb",
    ] {
        let Ok(original) = std::fs::read(public.join(name)) else {
            common::skip(&format!("../shared/corpus not present ({name})"));
            continue;
        };
        for at in (0..original.len().min(4096)).step_by(3) {
            let mut bytes = original.clone();
            bytes[at] ^= 0x80;
            assert_same(&format!("{name} ^0x80 at 0x{at:x}"), &bytes);
            cases += 1;
        }
        for len in [
            0,
            3,
            4,
            7,
            8,
            0x5b,
            0x5c,
            0x100,
            0x200,
            0x400,
            original.len() / 2,
            original.len() - 1,
        ] {
            assert_same(&format!("{name} truncated to {len}"), &original[..len]);
            cases += 1;
        }
    }
    eprintln!("{cases} mutated or truncated inputs: same result on both paths");
}

/// Bytes in memory that count what the parser reads, and may claim to be longer than they are
/// (the claimed tail reads as zeros).
struct Counting {
    bytes: Vec<u8>,
    read: Arc<AtomicU64>,
}

impl ReadAt for Counting {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.read.fetch_add(buf.len() as u64, Ordering::Relaxed);
        for (i, b) in buf.iter_mut().enumerate() {
            *b = self.bytes.get(offset as usize + i).copied().unwrap_or(0);
        }
        Ok(())
    }
}

fn counted(
    bytes: Vec<u8>,
    len: u64,
) -> (
    Result<nbg_lab::nbg::parse::Graph<'static>, nbg_lab::Failure>,
    u64,
) {
    let read = Arc::new(AtomicU64::new(0));
    let file = FileSource::new(
        Box::new(Counting {
            bytes,
            read: Arc::clone(&read),
        }),
        len,
        "counting".into(),
    );
    let parsed =
        nbg_lab::nbg::open::parse_source(Arc::new(file), Options::default()).expect("no I/O error");
    (parsed, read.load(Ordering::Relaxed))
}

#[test]
fn refuses_before_reading_payloads() {
    // A 2 GiB file with a bad magic: four bytes read.
    let (parsed, read) = counted(b"VPMX\0\0\0\0".to_vec(), 2 << 30);
    assert_eq!(parsed.unwrap_err().code, nbg_lab::Code::BadMagic);
    assert_eq!(read, 4);

    // A valid header that declares another size: the header only.
    let control = common::control("erf-u8.nb");
    let (parsed, read) = counted(control.clone(), 2 << 30);
    assert_eq!(
        parsed.unwrap_err().code,
        nbg_lab::Code::DeclaredSizeMismatch
    );
    assert!(
        read <= 56,
        "{read} bytes read: magic, version and the 48-byte header"
    );

    // A large graph whose input record is invalid: header, directory and that record, no
    // payload (the 12 MiB coefficient section is never read).
    let mut bytes = nbg_lab::lab::synth::bulk(3, 12 << 20)
        .unwrap()
        .emit()
        .unwrap();
    let len = bytes.len() as u64;
    let graph = parse(&bytes).expect("valid");
    let nbg_lab::nbg::parse::Graph::V2(g) = graph else {
        panic!("bulk is v2")
    };
    let input = g.section(1).expect("input section").offset as usize;
    drop(g);
    bytes[input..input + 4].copy_from_slice(&0u32.to_le_bytes());
    let (parsed, read) = counted(bytes, len);
    assert_eq!(parsed.unwrap_err().code, nbg_lab::Code::DimensionCount);
    assert!(read < 64 << 10, "{read} bytes read to refuse a record");

    // A valid large graph is read once, plus the small structure and edge reads.
    let bytes = nbg_lab::lab::synth::bulk(3, 12 << 20)
        .unwrap()
        .emit()
        .unwrap();
    let len = bytes.len() as u64;
    let (parsed, read) = counted(bytes, len);
    assert!(parsed.is_ok());
    assert!(
        read >= len && read < len + (256 << 10),
        "{read} bytes read for {len}"
    );
}

/// `nbg inventory` keeps each file's entry as canonical text in a temporary file and writes the
/// document piece by piece: the same bytes, and the same summary, as the document built from JSON values.
fn assert_rows_write_the_document(config: &std::path::Path) {
    use nbg_lab::lab::inventory;
    let corpus = nbg_lab::lab::corpus::load(config).expect("loadable config");
    let doc = inventory::document(&corpus, &inventory::scan(&corpus, 2, &|| {}));
    let (head, doc) = (doc.head.clone(), doc.to_json());
    let rows = inventory::inventory(&corpus, 2, &|| {}).expect("temporary file");
    let mut text = Vec::new();
    rows.write(&mut text).expect("writing to memory");
    assert_eq!(
        String::from_utf8(text).expect("UTF-8"),
        nbg_lab::canonical::canonical(&doc),
        "{}: the inventory written row by row differs",
        config.display()
    );
    assert_eq!(
        nbg_lab::report::inventory::summary(&rows.head),
        nbg_lab::report::inventory::summary(&head)
    );
    let failed: Vec<_> = rows
        .rows
        .iter()
        .filter(|r| !r.ok())
        .map(|r| &r.path)
        .collect();
    let doc_failed: Vec<_> = doc["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter(|f| f["pin"] != "ok" || !f["failure"].is_null())
        .map(|f| f["path"].as_str().expect("path"))
        .collect();
    assert_eq!(failed, doc_failed);
}

#[test]
fn inventory_rows_write_the_document() {
    let root = common::root();
    assert_rows_write_the_document(&root.join("controls/corpus.json"));
    assert_rows_write_the_document(&root.join("controls/public/corpus.json"));
    if let Some(dir) = common::corpus_dir() {
        assert_rows_write_the_document(&dir.join("corpus.json"));
    }
    // Failures (parse and pin), and a corpus of none.
    let tmp = tempfile::tempdir().expect("temp dir");
    let d = tmp.path();
    let erf = common::control("erf-u8.nb");
    let mut bad = erf.clone();
    bad[0] = b'X';
    let entry = |path: &str, bytes: &[u8], sha: String| {
        format!(
            r#"{{"path": "{path}", "role": "stock", "sha256": "{sha}", "size": {}}}"#,
            bytes.len()
        )
    };
    let sha = |b: &[u8]| nbg_lab::digest::Hash256::of(b).hex();
    for (name, bytes) in [("good.nb", &erf), ("bad.nb", &bad), ("pin.nb", &erf)] {
        std::fs::write(d.join(name), bytes).expect("write");
    }
    let files = [
        entry("good.nb", &erf, sha(&erf)),
        entry("bad.nb", &bad, sha(&bad)),
        entry("pin.nb", &erf, "0".repeat(64)),
    ];
    let config = d.join("corpus.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"schema": "nbg-corpus/1", "files": [{}]}}"#,
            files.join(", ")
        ),
    )
    .expect("write");
    assert_rows_write_the_document(&config);
    std::fs::write(&config, r#"{"schema": "nbg-corpus/1", "files": []}"#).expect("write");
    assert_rows_write_the_document(&config);
}
