//! Streaming fingerprints: parse a file from its structure with positioned reads, then read the
//! payload once, in fixed-size chunks, through every consumer at the same time.
//!
//! The parser reads the header, directory and decoded records through `read::Data` (bounded
//! reads of exactly the bytes it decodes) and hands this module the ranges to fingerprint. One
//! reader fills chunks of `CHUNK` bytes while two workers consume the previous chunk: one hashes
//! the whole file and CRCs every range, the other hashes every range; the byte histograms are
//! split between them so both cores carry the same load. Memory is `BUFFERS x CHUNK` per file,
//! whatever the file size. Small files run the same consumers on the calling thread.

use crate::files::{InputError, open_regular};
use crate::fingerprint::{EDGE, Fingerprint, Hash256, count_bytes};
use sha2::{Digest, Sha256};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel};
use std::sync::{Arc, Mutex};

/// Bytes read and handed to the consumers at once.
pub const CHUNK: usize = 2 << 20;
/// Chunk buffers per pipelined file: one being read, two being hashed.
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

/// Files at least this large are hashed by two workers while the next chunk is read.
const PIPELINE_BYTES: u64 = CHUNK as u64;
/// Per mille of each chunk whose histogram the range-hashing worker counts; the file-hashing
/// worker counts the rest and also runs the CRCs, which are about a tenth of the work.
const HISTOGRAM_SPLIT: u64 = 560;

/// Positioned reads: a file (`pread`), or bytes in memory that tests stream as if they were one.
pub trait ReadAt: Send + Sync {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
}

impl ReadAt for std::fs::File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
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
    error: Mutex<Option<String>>,
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

    pub fn len(&self) -> u64 {
        self.len
    }

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
        slot.get_or_insert_with(|| format!("{}: {e}", self.shown));
    }

    /// The first I/O error met, if any.
    pub fn error(&self) -> Option<InputError> {
        let slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        slot.clone().map(InputError)
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

/// Where each chunk's histogram work is divided between the two workers.
fn split_point(len: usize) -> usize {
    (len as u64 * HISTOGRAM_SPLIT / 1000) as usize
}

impl FileSide {
    fn consume(&mut self, ranges: &[(u64, u64)], hashed: usize, at: u64, chunk: &[u8]) {
        if let Some(sha) = &mut self.sha {
            sha.update(chunk);
        }
        let split = split_point(chunk.len());
        for (i, &r) in ranges.iter().enumerate() {
            let Some((s, e)) = clip(r, at, chunk.len()) else {
                continue;
            };
            self.crcs[i].update(&chunk[s..e]);
            if i < hashed && e > split {
                count_bytes(&chunk[s.max(split)..e], &mut self.histograms[i]);
            }
        }
    }
}

impl RangeSide {
    fn consume(&mut self, ranges: &[(u64, u64)], hashed: usize, at: u64, chunk: &[u8]) {
        let split = split_point(chunk.len());
        for (i, &r) in ranges[..hashed].iter().enumerate() {
            let Some((s, e)) = clip(r, at, chunk.len()) else {
                continue;
            };
            if let Some(sha) = &mut self.shas[i] {
                sha.update(&chunk[s..e]);
            }
            if s < split {
                count_bytes(&chunk[s..e.min(split)], &mut self.histograms[i]);
            }
        }
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
        let mut buf = take_buffer();
        let len = file.len() as usize;
        file.read_at_or_note(0, &mut buf[..len]);
        a.consume(&ranges, hashed, 0, &buf[..len]);
        b.consume(&ranges, hashed, 0, &buf[..len]);
        give_back(buf);
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

/// A chunk in flight: its file offset, length and buffer.
type Job = (u64, usize, Arc<Vec<u8>>);

/// Read chunks on the calling thread while one worker runs `a` and another `b` over the chunk
/// before. Buffers come back when both workers have dropped them.
fn pipeline(
    file: &FileSource,
    ranges: &[(u64, u64)],
    hashed: usize,
    a: &mut FileSide,
    b: &mut RangeSide,
) {
    // Unbounded, so a worker never waits for the reader to collect a signal.
    let (done_tx, done_rx) = channel::<()>();
    let mut pool: Vec<Arc<Vec<u8>>> = Vec::with_capacity(BUFFERS);
    std::thread::scope(|scope| {
        let (tx_a, rx_a) = sync_channel::<Job>(BUFFERS);
        let (tx_b, rx_b) = sync_channel::<Job>(BUFFERS);
        let done_a = done_tx.clone();
        scope.spawn(move || {
            for (at, len, buf) in rx_a {
                a.consume(ranges, hashed, at, &buf[..len]);
                drop(buf);
                let _ = done_a.send(());
            }
        });
        let done_b = done_tx.clone();
        scope.spawn(move || {
            for (at, len, buf) in rx_b {
                b.consume(ranges, hashed, at, &buf[..len]);
                drop(buf);
                let _ = done_b.send(());
            }
        });
        let mut at = 0u64;
        while at < file.len() {
            let len = (file.len() - at).min(CHUNK as u64) as usize;
            let slot = loop {
                if let Some(i) = pool.iter().position(|p| Arc::strong_count(p) == 1) {
                    break i;
                }
                if pool.len() < BUFFERS {
                    pool.push(Arc::new(take_buffer()));
                    break pool.len() - 1;
                }
                if done_rx.recv().is_err() {
                    return;
                }
            };
            // Invariant: a buffer is back in the pool only after its worker dropped its handle.
            let buf = Arc::get_mut(&mut pool[slot]).expect("no worker holds a returned buffer");
            if let Err(e) = file.file.read_exact_at(&mut buf[..len], at) {
                file.note(&e);
                break;
            }
            let job = &pool[slot];
            if tx_a.send((at, len, Arc::clone(job))).is_err()
                || tx_b.send((at, len, Arc::clone(job))).is_err()
            {
                break;
            }
            at += len as u64;
        }
        drop(tx_a);
        drop(tx_b);
    });
    // The workers have ended, so every buffer is ours again.
    for buffer in pool.into_iter().filter_map(|b| Arc::try_unwrap(b).ok()) {
        give_back(buffer);
    }
}
