//! Streaming fingerprints: parse a file from its structure with positioned reads, then read the
//! payload once, in fixed-size chunks, through every consumer at the same time.
//!
//! The parser reads the header, directory and decoded records through `read::Data` (bounded
//! reads of exactly the bytes it decodes) and hands this module the ranges to fingerprint. One
//! thread maps the file a chunk of `CHUNK` bytes at a time (`window`: no copy out of the page
//! cache; a reader that is not a file is read into buffers instead) while two workers consume
//! the chunk before: one hashes the whole file and CRCs every range, the other hashes every
//! range. Each worker counts the byte histograms of the pieces of the chunk it reaches first,
//! 64 bytes at a time between its hash's blocks (`interleave`), so the counting fills the
//! SHA-NI latency and both cores carry the same load. Memory is a few chunks per file, whatever
//! the file size. Files under one chunk run on the calling thread, both hashes interleaved.

use crate::digest::Hash256;
use crate::files::{InputError, open_regular};
use crate::nbg::fingerprint::{EDGE, Fingerprint, count_bytes, interleave};
use crate::nbg::window::Window;
use sha2::{Digest, Sha256};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel};
use std::sync::{Arc, Mutex};

/// Bytes mapped (or read) and handed to the consumers at once.
pub const CHUNK: usize = 2 << 20;
/// Chunks queued per worker of a pipelined file, and buffers per file when chunks are read
/// rather than mapped: at most `BUFFERS + 2` chunks are in memory at once.
pub const BUFFERS: usize = 3;
/// Chunk buffers kept for the next file: enough for two files in flight. Reusing them spares
/// every file the page faults of fresh buffers; memory stays `POOLED x CHUNK` at most.
const POOLED: usize = 2 * BUFFERS;
static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

fn take_buffer() -> Vec<u8> {
    let pooled = POOL.lock().unwrap_or_else(|p| p.into_inner()).pop();
    pooled.unwrap_or_else(|| vec![0; CHUNK])
}

fn give_back(buffer: Vec<u8>) {
    let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
    if pool.len() < POOLED {
        pool.push(buffer);
    }
}

/// Pieces each chunk's histogram work is cut into, claimed by whichever worker reaches a
/// piece first (`claim_pieces`).
const PIECES: usize = 16;
/// Files at least this large are hashed by two workers while the next chunk is read.
const PIPELINE_BYTES: u64 = CHUNK as u64;
/// Positioned reads: a file (`pread`), or bytes in memory that tests stream as if they were one.
pub trait ReadAt: Send + Sync {
    /// Fill `buf` from file offset `offset`, or fail (a short read is an error).
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;

    /// The file itself, when this reader is one: its payload is then mapped window by window
    /// instead of copied.
    fn as_file(&self) -> Option<&std::fs::File> {
        None
    }
}

impl ReadAt for std::fs::File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
    }

    fn as_file(&self) -> Option<&std::fs::File> {
        Some(self)
    }
}

impl ReadAt for Vec<u8> {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let end = offset.checked_add(buf.len() as u64);
        match end.and_then(|e| self.get(offset as usize..e as usize)) {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(())
            }
            None => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    }
}

/// A regular file opened for positioned reads. The first I/O error is kept: the parser then
/// sees a short read as a failure, and the caller reports the I/O error instead (exit 2).
pub struct FileSource {
    file: Box<dyn ReadAt>,
    len: u64,
    shown: String,
    error: Mutex<Option<(std::io::ErrorKind, String)>>,
}

impl std::fmt::Debug for FileSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileSource({}, {} bytes)", self.shown, self.len)
    }
}

impl FileSource {
    /// Open `path` with the refusals of `files::read_regular` (symlinks, directories, devices).
    pub fn open(path: &Path) -> Result<Self, InputError> {
        let (file, meta) = open_regular(path)?;
        Ok(FileSource::new(
            Box::new(file),
            meta.len(),
            path.display().to_string(),
        ))
    }

    /// Any positioned reader of `len` bytes, named `shown` in messages.
    pub fn new(file: Box<dyn ReadAt>, len: u64, shown: String) -> Self {
        FileSource {
            file,
            len,
            shown,
            error: Mutex::new(None),
        }
    }

    /// Bytes in memory read through the streaming path (equivalence tests).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        let len = bytes.len() as u64;
        FileSource::new(Box::new(bytes), len, "(memory)".into())
    }

    /// The file size in bytes, as stated when opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fill `buf` from `offset`; on error the buffer is zeroed and the error kept.
    pub(crate) fn read_at_or_note(&self, offset: u64, buf: &mut [u8]) {
        if let Err(e) = self.file.read_exact_at(buf, offset) {
            buf.fill(0);
            self.note(&e);
        }
    }

    fn note(&self, e: &std::io::Error) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert_with(|| (e.kind(), e.to_string()));
    }

    /// The first I/O error met, if any.
    pub fn error(&self) -> Option<InputError> {
        let slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        slot.as_ref().map(|(kind, message)| {
            InputError::io(&self.shown, std::io::Error::new(*kind, message.clone()))
        })
    }
}

/// SHA-256 of a whole file, streamed in chunks.
pub fn sha256(file: &FileSource) -> Result<Hash256, InputError> {
    let plan = Plan {
        full: &[],
        crc_only: &[],
        fingerprints: true,
    };
    let out = run(file, &plan);
    match file.error() {
        Some(e) => Err(e),
        None => Ok(out.file_sha256),
    }
}

/// What to compute in one pass: `full` ranges get a whole fingerprint, `crc_only` ranges only
/// a CRC-32; with `fingerprints == false` every range gets only its CRC and the file no hash.
pub(crate) struct Plan<'a> {
    pub full: &'a [(u64, u64)],
    pub crc_only: &'a [(u64, u64)],
    pub fingerprints: bool,
}

pub(crate) struct Streamed {
    pub file_sha256: Hash256,
    pub full: Vec<Fingerprint>,
    pub crc_only: Vec<u32>,
}

/// The consumers' state for one chunk at file offset `at`, split in the two workers' halves.
struct FileSide {
    sha: Option<Sha256>,
    crcs: Vec<crc32fast::Hasher>,
    histograms: Vec<[u64; 256]>,
}

struct RangeSide {
    shas: Vec<Option<Sha256>>,
    histograms: Vec<[u64; 256]>,
}

/// `[start, end)` clipped to the chunk `[at, at + len)`, as chunk-relative indices.
fn clip(range: (u64, u64), at: u64, len: usize) -> Option<(usize, usize)> {
    let end = at + len as u64;
    let (s, e) = (range.0.max(at), range.1.min(end));
    (s < e).then(|| ((s - at) as usize, (e - at) as usize))
}

/// Which hashed ranges cover a cut of a chunk.
#[derive(Clone, Copy)]
enum Cover {
    None,
    One(usize),
    Many,
}

/// Cut `[at, end)` where hashed ranges start and end, and call `f(start, end, cover)` for each
/// cut in order.
fn cuts(ranges: &[(u64, u64)], at: u64, end: u64, mut f: impl FnMut(u64, u64, Cover)) {
    let mut pos = at;
    while pos < end {
        let (mut cover, mut next) = (Cover::None, end);
        for (i, &(s, e)) in ranges.iter().enumerate() {
            if s <= pos && pos < e {
                cover = match cover {
                    Cover::None => Cover::One(i),
                    _ => Cover::Many,
                };
                next = next.min(e);
            } else if pos < s {
                next = next.min(s);
            }
        }
        f(pos, next, cover);
        pos = next;
    }
}

/// Feed `bytes` to the SHA-256 of every hashed range covering `pos`.
fn hash_covering(shas: &mut [Option<Sha256>], ranges: &[(u64, u64)], pos: u64, bytes: &[u8]) {
    for (sha, &(s, e)) in shas.iter_mut().zip(ranges) {
        if let (true, Some(sha)) = (s <= pos && pos < e, sha) {
            sha.update(bytes);
        }
    }
}

/// Count `bytes` into the histogram of every hashed range covering `pos`.
fn count_covering(histograms: &mut [[u64; 256]], ranges: &[(u64, u64)], pos: u64, bytes: &[u8]) {
    for (i, &(s, e)) in ranges.iter().enumerate() {
        if s <= pos && pos < e {
            count_bytes(bytes, &mut histograms[i]);
        }
    }
}

impl FileSide {
    /// Every range's CRC-32 over the chunk at `at`.
    fn crc(&mut self, ranges: &[(u64, u64)], at: u64, chunk: &[u8]) {
        for (i, &r) in ranges.iter().enumerate() {
            if let Some((s, e)) = clip(r, at, chunk.len()) {
                self.crcs[i].update(&chunk[s..e]);
            }
        }
    }

    /// The file's SHA-256 over `piece` at `at`, and the histograms of its bytes before offset
    /// `mid`, counted between the hash's blocks.
    fn hash(&mut self, hashed: &[(u64, u64)], at: u64, piece: &[u8], mid: u64) {
        let FileSide {
            sha, histograms, ..
        } = self;
        let Some(sha) = sha else {
            return;
        };
        cuts(hashed, at, at + piece.len() as u64, |s, e, cover| {
            let bytes = &piece[(s - at) as usize..(e - at) as usize];
            let (counted, rest) = bytes.split_at(bytes.len().min(mid.saturating_sub(s) as usize));
            match cover {
                Cover::One(i) => interleave(sha, s, None, &mut histograms[i], counted),
                Cover::None => sha.update(counted),
                Cover::Many => {
                    sha.update(counted);
                    count_covering(histograms, hashed, s, counted);
                }
            }
            sha.update(rest);
        });
    }
}

/// Cut the chunk at `at` into `PIECES` pieces and call `f(offset, piece, counted)` on each in
/// order, where `counted` says whether this worker claimed the piece's histograms: the first
/// worker to reach a piece counts it, so the one ahead counts more and the other catches up
/// (both must hash every piece, in order).
fn claim_pieces(at: u64, chunk: &[u8], claimed: &AtomicUsize, mut f: impl FnMut(u64, &[u8], bool)) {
    let size = chunk.len().div_ceil(PIECES).max(1);
    for (k, piece) in chunk.chunks(size).enumerate() {
        let mine = claimed
            .compare_exchange(k, k + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        f(at + (k * size) as u64, piece, mine);
    }
}

impl RangeSide {
    /// The chunk at `at`: every hashed range's SHA-256, and the histograms of the bytes from
    /// offset `mid` on, counted between the hashes' blocks.
    fn consume(&mut self, ranges: &[(u64, u64)], at: u64, chunk: &[u8], mid: u64) {
        let RangeSide { shas, histograms } = self;
        cuts(ranges, at, at + chunk.len() as u64, |s, e, cover| {
            let bytes = &chunk[(s - at) as usize..(e - at) as usize];
            let split = bytes.len().min(mid.saturating_sub(s) as usize);
            match cover {
                Cover::One(i) => {
                    let (plain, counted) = bytes.split_at(split);
                    if let Some(sha) = &mut shas[i] {
                        sha.update(plain);
                        let done = s + split as u64 - ranges[i].0;
                        interleave(sha, done, None, &mut histograms[i], counted);
                    }
                }
                Cover::None => {}
                Cover::Many => {
                    hash_covering(shas, ranges, s, bytes);
                    count_covering(histograms, ranges, s, &bytes[split..]);
                }
            }
        });
    }
}

/// One pass over `file` for everything `plan` asks. I/O errors are kept by `file`.
pub(crate) fn run(file: &FileSource, plan: &Plan<'_>) -> Streamed {
    let ranges: Vec<(u64, u64)> = plan.full.iter().chain(plan.crc_only).copied().collect();
    // Ranges that get SHA-256 and a histogram; the rest only a CRC.
    let hashed = if plan.fingerprints {
        plan.full.len()
    } else {
        0
    };
    let mut a = FileSide {
        sha: plan.fingerprints.then(Sha256::new),
        crcs: vec![crc32fast::Hasher::new(); ranges.len()],
        histograms: vec![[0; 256]; hashed],
    };
    let mut b = RangeSide {
        shas: (0..hashed).map(|_| Some(Sha256::new())).collect(),
        histograms: vec![[0; 256]; hashed],
    };
    if file.len() < PIPELINE_BYTES {
        serial(file, &ranges, hashed, &mut a, &mut b);
    } else {
        pipeline(file, &ranges, hashed, &mut a, &mut b);
    }
    let file_sha256 = a
        .sha
        .take()
        .map_or_else(Hash256::default, |s| Hash256(s.finalize().into()));
    let mut crcs = a.crcs.into_iter().map(|c| c.finalize());
    let mut full = Vec::with_capacity(plan.full.len());
    for (i, &(s, e)) in plan.full.iter().enumerate() {
        let crc = crcs.next().unwrap_or_default();
        if i >= hashed {
            full.push(Fingerprint::crc_only(crc));
            continue;
        }
        let mut histogram = a.histograms[i];
        for (t, x) in histogram.iter_mut().zip(b.histograms[i].iter()) {
            *t += x;
        }
        let sha = b.shas[i]
            .take()
            .map_or_else(Hash256::default, |s| Hash256(s.finalize().into()));
        let edge = EDGE.min((e - s) as usize);
        let (mut head, mut tail) = (vec![0; edge], vec![0; edge]);
        file.read_at_or_note(s, &mut head);
        file.read_at_or_note(e - edge as u64, &mut tail);
        full.push(Fingerprint::from_parts(
            sha,
            crc,
            &histogram,
            e - s,
            &head,
            &tail,
        ));
    }
    Streamed {
        file_sha256,
        full,
        crc_only: crcs.collect(),
    }
}

/// Bytes both sides consume at once in `serial`: small enough to stay in this core's caches
/// between the two passes.
const PIECE: usize = 256 << 10;

/// Run both sides on the calling thread over a file of less than one chunk, piece by piece, so
/// every byte is read from memory once and then found in cache by the other consumers.
fn serial(
    file: &FileSource,
    ranges: &[(u64, u64)],
    hashed: usize,
    a: &mut FileSide,
    b: &mut RangeSide,
) {
    let len = file.len() as usize;
    let window = file.file.as_file().and_then(|f| Window::map(f, 0, len));
    let mut buffer = None;
    let bytes = match &window {
        Some(window) => window.bytes(),
        None => {
            let buf = buffer.insert(take_buffer());
            file.read_at_or_note(0, &mut buf[..len]);
            &buf[..len]
        }
    };
    for (i, piece) in bytes.chunks(PIECE).enumerate() {
        consume_both(a, b, ranges, hashed, (i * PIECE) as u64, piece);
    }
    if window.as_ref().is_some_and(Window::faulted) {
        note_shrunk(file, 0);
    }
    if let Some(buf) = buffer {
        give_back(buf);
    }
}

/// Both sides over `piece` (at file offset `at`) on this thread: every range's CRC-32, then
/// the file's SHA-256, each range's SHA-256 and its histogram, interleaved where one range
/// covers the bytes.
fn consume_both(
    a: &mut FileSide,
    b: &mut RangeSide,
    ranges: &[(u64, u64)],
    hashed: usize,
    at: u64,
    piece: &[u8],
) {
    let end = at + piece.len() as u64;
    a.crc(ranges, at, piece);
    let Some(file) = &mut a.sha else {
        return;
    };
    let hashed = &ranges[..hashed];
    let RangeSide { shas, histograms } = b;
    cuts(hashed, at, end, |s, e, cover| {
        let bytes = &piece[(s - at) as usize..(e - at) as usize];
        match cover {
            Cover::One(i) => {
                interleave(file, s, shas[i].as_mut(), &mut histograms[i], bytes);
            }
            Cover::None => file.update(bytes),
            Cover::Many => {
                file.update(bytes);
                hash_covering(shas, hashed, s, bytes);
                count_covering(histograms, hashed, s, bytes);
            }
        }
    });
}

/// A chunk's bytes: a mapped window of the file, or a buffer they were read into (a reader
/// that is not a file, or a window that could not be mapped).
enum Bytes {
    Mapped(Window),
    Read(Vec<u8>),
}

impl Bytes {
    fn get(&self) -> &[u8] {
        match self {
            Bytes::Mapped(window) => window.bytes(),
            Bytes::Read(buffer) => buffer,
        }
    }

    /// Note, after a worker has read the chunk at `at`, a window whose file shrank under it.
    fn check(&self, file: &FileSource, at: u64) {
        if let Bytes::Mapped(window) = self
            && window.faulted()
        {
            note_shrunk(file, at);
        }
    }
}

/// The I/O error of a mapped chunk at `at` read past the file's new end.
fn note_shrunk(file: &FileSource, at: u64) {
    file.note(&std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        format!("the file shrank while it was read (the chunk at offset {at})"),
    ));
}

/// A chunk in flight: its file offset, length, bytes and how many of its pieces' histograms
/// a worker has claimed.
type Job = (u64, usize, Arc<Bytes>, Arc<AtomicUsize>);

/// Map (or read) chunks on the calling thread while one worker runs `a` and another `b` over the
/// chunk before. Windows are unmapped, and buffers come back, when both workers have dropped
/// them; the bounded channels keep at most `BUFFERS` chunks in flight per worker.
fn pipeline(
    file: &FileSource,
    ranges: &[(u64, u64)],
    hashed: usize,
    a: &mut FileSide,
    b: &mut RangeSide,
) {
    // Unbounded, so a worker never waits for the reader to collect a signal.
    let (done_tx, done_rx) = channel::<()>();
    let mut pool: Vec<Arc<Bytes>> = Vec::with_capacity(BUFFERS);
    std::thread::scope(|scope| {
        let (tx_a, rx_a) = sync_channel::<Job>(BUFFERS);
        let (tx_b, rx_b) = sync_channel::<Job>(BUFFERS);
        let done_a = done_tx.clone();
        scope.spawn(move || {
            for (at, len, buf, claimed) in rx_a {
                let chunk = &buf.get()[..len];
                a.crc(ranges, at, chunk);
                claim_pieces(at, chunk, &claimed, |at, piece, mine| {
                    let mid = at + if mine { piece.len() as u64 } else { 0 };
                    a.hash(&ranges[..hashed], at, piece, mid);
                });
                buf.check(file, at);
                drop(buf);
                let _ = done_a.send(());
            }
        });
        let done_b = done_tx.clone();
        scope.spawn(move || {
            for (at, len, buf, claimed) in rx_b {
                let chunk = &buf.get()[..len];
                claim_pieces(at, chunk, &claimed, |at, piece, mine| {
                    let mid = at + if mine { 0 } else { piece.len() as u64 };
                    b.consume(&ranges[..hashed], at, piece, mid);
                });
                buf.check(file, at);
                drop(buf);
                let _ = done_b.send(());
            }
        });
        let mut at = 0u64;
        while at < file.len() {
            let len = (file.len() - at).min(CHUNK as u64) as usize;
            let mapped = file.file.as_file().and_then(|f| Window::map(f, at, len));
            let job = match mapped {
                Some(window) => Arc::new(Bytes::Mapped(window)),
                None => match read_into_pool(file, &mut pool, &done_rx, at, len) {
                    Some(slot) => Arc::clone(&pool[slot]),
                    None => break,
                },
            };
            let claimed = Arc::new(AtomicUsize::new(0));
            if tx_a
                .send((at, len, Arc::clone(&job), Arc::clone(&claimed)))
                .is_err()
                || tx_b.send((at, len, job, claimed)).is_err()
            {
                break;
            }
            at += len as u64;
        }
        drop(tx_a);
        drop(tx_b);
    });
    // The workers have ended, so every buffer is ours again.
    for bytes in pool.into_iter().filter_map(|b| Arc::try_unwrap(b).ok()) {
        if let Bytes::Read(buffer) = bytes {
            give_back(buffer);
        }
    }
}

/// Read `len` bytes at `at` into a free buffer of `pool` (adding one while fewer than
/// `BUFFERS`, else waiting for the workers to drop one) and return its index; `None` when
/// the read failed (the error is noted) or the workers are gone.
fn read_into_pool(
    file: &FileSource,
    pool: &mut Vec<Arc<Bytes>>,
    done: &std::sync::mpsc::Receiver<()>,
    at: u64,
    len: usize,
) -> Option<usize> {
    let slot = loop {
        if let Some(i) = pool.iter_mut().position(|p| Arc::get_mut(p).is_some()) {
            break i;
        }
        if pool.len() < BUFFERS {
            pool.push(Arc::new(Bytes::Read(take_buffer())));
            break pool.len() - 1;
        }
        done.recv().ok()?;
    };
    // The slot was found free, and workers never take a dropped handle back.
    let read = match Arc::get_mut(&mut pool[slot]) {
        Some(Bytes::Read(buf)) => file.file.read_exact_at(&mut buf[..len], at),
        _ => Err(std::io::Error::other("chunk buffer still in use")),
    };
    match read {
        Ok(()) => Some(slot),
        Err(e) => {
            file.note(&e);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nbg::fingerprint::crc32;

    /// Both engines (two workers, one thread) give every range the fingerprint of its bytes in
    /// memory, with ranges that overlap, nest, are empty, and cross chunks and the workers'
    /// histogram split at unaligned offsets.
    #[test]
    fn both_engines_fingerprint_like_memory() {
        for len in [3 * CHUNK + 12_345, 70_001] {
            let bytes: Vec<u8> = (0..len)
                .map(|i| (i.wrapping_mul(7919) % 251) as u8 ^ (i >> 13) as u8)
                .collect();
            let n = len as u64;
            let full = [
                (0, 100),
                (50, 3 * 64 + 7),
                (1000, n / 2 + 999),
                (n / 3 - 5, n),
                (10, 10),
                (77, n - 1),
                (n - 1, n),
            ];
            let crc_only = [(3, n - 3), (0, n)];
            {
                let engine = if len < PIPELINE_BYTES as usize {
                    "one thread"
                } else {
                    "two workers"
                };
                let file = FileSource::from_bytes(bytes.clone());
                let plan = Plan {
                    full: &full,
                    crc_only: &crc_only,
                    fingerprints: true,
                };
                let out = run(&file, &plan);
                assert_eq!(out.file_sha256, Hash256::of(&bytes), "{len} {engine}");
                for (f, &(s, e)) in out.full.iter().zip(&full) {
                    let expected = Fingerprint::of(&bytes[s as usize..e as usize]);
                    assert_eq!(*f, expected, "{len} {engine} [{s}, {e})");
                }
                let crcs: Vec<u32> = crc_only
                    .iter()
                    .map(|&(s, e)| crc32(&bytes[s as usize..e as usize]))
                    .collect();
                assert_eq!(out.crc_only, crcs, "{len} {engine}");
            }
        }
    }
}
