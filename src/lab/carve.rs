//! Every NBG embedded in a firmware image, archive or container (`nbg carve`): each `VPMN` is a
//! candidate, bounded by its declared size (v2) or by its tables (v1, plus the toolkit's
//! `tensorname:` text trailer where one follows), parsed strictly from the image with positioned
//! reads, and extracted only when valid. A magic whose graph is invalid is a near miss, listed
//! with its failure code and never extracted. The image is scanned in fixed chunks and each
//! candidate streamed, so memory stays constant whatever the image size.

use crate::digest::Hash256;
use crate::files::{InputError, open_regular};
use crate::nbg::failure::{Code, Failure};
use crate::nbg::family::NbgFamily as _;
use crate::nbg::fieldmap::v2_header;
use crate::nbg::format::v1 as f1;
use crate::nbg::parse::Options;
use crate::nbg::read::le32;
use crate::nbg::stream::{FileSource, ReadAt};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes scanned at once.
const SCAN: usize = 4 << 20;
/// Near misses listed; the rest are counted.
pub const NEAR_MISSES_LISTED: usize = 10_000;
/// The text a Khadas/Amlogic toolkit appends after a v1 file's last table (five public files).
const TRAILER: &[u8] = b"tensorname:";
/// Longest trailer accepted.
const TRAILER_MAX: u64 = 64 << 10;

/// A valid NBG found in the image.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    /// Image offset of its magic.
    pub offset: u64,
    /// Its length.
    pub bytes: u64,
    /// `nbg-v1` or `nbg-v2`.
    pub format: &'static str,
    /// The version word.
    pub version: String,
    /// The target word.
    pub target: String,
    /// SHA-256 of its bytes.
    pub sha256: Hash256,
    /// Bytes of the `tensorname:` trailer included (v1).
    pub trailer_bytes: u64,
    /// Whether a CRC vouches for its bytes.
    pub integrity: Integrity,
    /// Where it was extracted, when an output folder was given.
    pub extracted: Option<String>,
}

/// A magic whose graph is invalid.
#[derive(Clone, Debug, Serialize)]
pub struct NearMiss {
    /// Image offset of its magic.
    pub offset: u64,
    /// Why it is not extracted.
    pub code: Miss,
    /// Image offset the failure names.
    pub failure_offset: u64,
    /// The failure's message.
    pub message: String,
    /// The offset of a found NBG whose bytes hold this magic.
    pub inside: Option<u64>,
}

/// Why a magic is a near miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// The strict parse refused the candidate with this code; for a v1 candidate whose CRC
    /// field is set but matches no rule (its bytes are not the ones the CRC was computed over),
    /// `crc-field-unexplained`, the code `check --strict` and the sweep give it.
    Invalid(Code),
    /// A candidate that parses but whose extent holds the magic of another valid NBG: a
    /// truncated copy running into the next file (a v1 file without a CRC has no other sign).
    HoldsAnotherNbg,
}

impl Miss {
    /// The stable code.
    pub fn as_str(self) -> &'static str {
        match self {
            Miss::Invalid(c) => c.as_str(),
            Miss::HoldsAnotherNbg => "holds-another-nbg",
        }
    }
}

impl Serialize for Miss {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// How far a found NBG's bytes are vouched for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Integrity {
    /// Its CRC (v2 checksums, a v1 CRC a rule reproduces) covers its bytes.
    Crc,
    /// A v1 file without a CRC: its structure is valid, its payload bytes unvouched.
    StructureOnly,
}

/// What a carve found.
#[derive(Clone, Debug, Serialize)]
pub struct Carved {
    /// `nbg-carve/1`.
    pub schema: &'static str,
    /// The image as given.
    pub image: String,
    /// Its size.
    pub image_bytes: u64,
    /// `VPMN` occurrences.
    pub magics: u64,
    /// Valid NBGs, in image order.
    pub found: Vec<Found>,
    /// Near misses, in image order (the first `NEAR_MISSES_LISTED`).
    pub near_misses: Vec<NearMiss>,
    /// Near misses in all.
    pub near_miss_count: u64,
}

/// Why a carve could not run.
#[derive(Debug, thiserror::Error)]
pub enum CarveError {
    /// The image (or the output folder) could not be read or written.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The image changed while it was carved: an extracted file's bytes do not hash as parsed.
    #[error("{0}: changed while it was carved (an extracted file does not hash as it parsed)")]
    Changed(PathBuf),
}

/// `len` bytes of the image from `base`, read as a file of its own.
struct Window {
    file: Arc<File>,
    base: u64,
}

impl ReadAt for Window {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let at = self
            .base
            .checked_add(offset)
            .ok_or(std::io::ErrorKind::UnexpectedEof)?;
        pread(&self.file, buf, at)
    }
}

/// A positioned read of exactly `buf.len()` bytes.
fn pread(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

fn read_u32(file: &File, at: u64) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    pread(file, &mut b, at)?;
    Ok(u32::from_le_bytes(b))
}

/// The candidate's length from its magic at `at`, or the failure that bounds none (relative
/// offsets, as the parser reports them).
fn bound(file: &File, at: u64, len: u64) -> std::io::Result<Result<(u64, u64), Failure>> {
    let room = len - at;
    let truncated = |offset: u64, what: &str| {
        Ok(Err(Failure::new(
            Code::Truncated,
            offset,
            format!("{what} runs past the end of the image"),
        )))
    };
    if room < 8 {
        return truncated(4, "the version word");
    }
    let version = read_u32(file, at + 4)?;
    match version >> 16 {
        2 => {
            let end = v2_header::total_size_high.offset as u64 + 4;
            if room < end {
                return truncated(0, "the header");
            }
            let low = u64::from(read_u32(
                file,
                at + v2_header::total_size_low.offset as u64,
            )?);
            let high = u64::from(read_u32(
                file,
                at + v2_header::total_size_high.offset as u64,
            )?);
            let size = (high << 32) | low;
            if size > room {
                return Ok(Err(Failure::new(
                    Code::Truncated,
                    room,
                    format!("the declared size {size} runs past the end of the image"),
                )));
            }
            Ok(Ok((size, 0)))
        }
        1 if version >= f1::MIN_VERSION => {
            let entries = f1::entries_offset(version) as u64;
            let fixed_end = entries + 8 * f1::entry_count(version) as u64;
            if room < fixed_end {
                return truncated(0, "the fixed part");
            }
            let mut table = vec![0u8; (fixed_end - entries) as usize];
            pread(file, &mut table, at + entries)?;
            let end = table
                .chunks_exact(8)
                .map(|e| u64::from(le32(e, 0)) + u64::from(le32(e, 4)))
                .fold(fixed_end, u64::max);
            if end > room {
                return Ok(Err(Failure::new(
                    Code::Truncated,
                    room,
                    format!("its tables end at {end}, past the end of the image"),
                )));
            }
            let trailer = trailer(file, at + end, len)?;
            Ok(Ok((end + trailer, trailer)))
        }
        _ => Ok(Err(Failure::new(
            Code::UnsupportedVersion,
            4,
            format!("version word 0x{version:08x} is not of a family nbg reads"),
        ))),
    }
}

/// Bytes of a `tensorname:` trailer at `at`: the printable run that starts with it, up to its
/// last `:`.
fn trailer(file: &File, at: u64, len: u64) -> std::io::Result<u64> {
    let n = (len - at).min(TRAILER_MAX) as usize;
    if n < TRAILER.len() {
        return Ok(0);
    }
    let mut b = vec![0u8; n];
    pread(file, &mut b, at)?;
    if !b.starts_with(TRAILER) {
        return Ok(0);
    }
    let printable = b.iter().take_while(|c| (0x20..0x7f).contains(*c)).count();
    Ok(b[..printable]
        .iter()
        .rposition(|&c| c == b':')
        .map_or(0, |i| i as u64 + 1))
}

/// Copy `[at, at + bytes)` of the image to a new file `path`, hashing as it goes.
fn extract(file: &File, at: u64, bytes: u64, path: &Path) -> std::io::Result<Hash256> {
    use std::io::Write as _;
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; (1 << 20).min(bytes as usize).max(1)];
    let mut done = 0;
    while done < bytes {
        let n = (bytes - done).min(buf.len() as u64) as usize;
        pread(file, &mut buf[..n], at + done)?;
        sha.update(&buf[..n]);
        out.write_all(&buf[..n])?;
        done += n as u64;
    }
    out.sync_all()?;
    Ok(Hash256(sha.finalize().into()))
}

/// Carve `image`; with `out`, extract each valid NBG into that new folder as
/// `0x<offset>.nb`. The folder is created here and must not exist. Candidates are judged in a
/// first pass over the image and extracted after it, so a candidate found to hold another valid
/// NBG is never written.
pub fn carve(image: &Path, out: Option<&Path>) -> Result<Carved, CarveError> {
    let (file, meta) = open_regular(image)?;
    let file = Arc::new(file);
    let len = meta.len();
    // A folder this run creates, removed again if the run fails.
    let created = out.map(crate::output::new_dir).transpose()?;
    let io = |e| CarveError::Input(InputError::io(image, e));
    let mut carved = Carved {
        schema: "nbg-carve/1",
        image: image.display().to_string(),
        image_bytes: len,
        magics: 0,
        found: Vec::new(),
        near_misses: Vec::new(),
        near_miss_count: 0,
    };
    let mut misses = Vec::new();
    let mut invalid = 0u64;
    let finder = memchr::memmem::Finder::new(b"VPMN");
    let mut buf = vec![0u8; SCAN];
    let mut at = 0u64;
    while at < len {
        let n = (len - at).min(SCAN as u64) as usize;
        pread(&file, &mut buf[..n], at).map_err(io)?;
        let hits: Vec<u64> = finder.find_iter(&buf[..n]).map(|i| at + i as u64).collect();
        for magic in hits {
            carved.magics += 1;
            match judge(&file, magic, len, image)? {
                Ok(found) => carved.found.push(found),
                Err(f) => {
                    // Only the first ones are listed; later ones (in image order) are counted.
                    invalid += 1;
                    if misses.len() < NEAR_MISSES_LISTED {
                        misses.push((magic, Miss::Invalid(f.code), magic + f.offset, f.message));
                    }
                }
            }
        }
        if at + n as u64 >= len {
            break;
        }
        // A magic that starts in the last three bytes is found in the next window.
        at += n as u64 - 3;
    }
    // A found NBG whose extent holds another's magic is a truncated copy running into it:
    // found NBGs are in image order, so the next one is the first it could hold.
    let found = std::mem::take(&mut carved.found);
    let nexts: Vec<Option<u64>> = found
        .iter()
        .enumerate()
        .map(|(i, f)| {
            found
                .get(i + 1)
                .map(|g| g.offset)
                .filter(|&s| s < f.offset + f.bytes)
        })
        .collect();
    let mut holding = 0u64;
    for (f, next) in found.into_iter().zip(nexts) {
        match next {
            None => carved.found.push(f),
            Some(next) => {
                holding += 1;
                misses.push((
                    f.offset,
                    Miss::HoldsAnotherNbg,
                    next,
                    format!(
                        "parses as a {}-byte {} but holds the valid NBG at 0x{next:x}",
                        f.bytes, f.format
                    ),
                ));
            }
        }
    }
    carved.near_miss_count = invalid + holding;
    misses.sort_by_key(|m| m.0);
    for (offset, code, failure_offset, message) in misses.into_iter().take(NEAR_MISSES_LISTED) {
        // The kept NBGs do not overlap: only the last one before the magic can hold it.
        let before = carved.found.partition_point(|x| x.offset < offset);
        let inside = before
            .checked_sub(1)
            .map(|i| &carved.found[i])
            .filter(|x| offset < x.offset + x.bytes)
            .map(|x| x.offset);
        carved.near_misses.push(NearMiss {
            offset,
            code,
            failure_offset,
            message,
            inside,
        });
    }
    if let Some(dir) = out {
        for f in &mut carved.found {
            let path = dir.join(format!("0x{:010x}.nb", f.offset));
            let written = extract(&file, f.offset, f.bytes, &path)
                .map_err(|e| CarveError::Input(InputError::io(&path, e)))?;
            if written != f.sha256 {
                return Err(CarveError::Changed(image.to_path_buf()));
            }
            f.extracted = Some(path.display().to_string());
        }
    }
    if let Some(dir) = created {
        dir.keep();
    }
    Ok(carved)
}

/// The candidate at `magic`: found, or the failure that makes it a near miss.
fn judge(
    file: &Arc<File>,
    magic: u64,
    len: u64,
    image: &Path,
) -> Result<Result<Found, Failure>, CarveError> {
    let io = |e| CarveError::Input(InputError::io(image, e));
    let (bytes, trailer_bytes) = match bound(file, magic, len).map_err(io)? {
        Err(f) => return Ok(Err(f)),
        Ok(b) => b,
    };
    let source = Arc::new(FileSource::new(
        Box::new(Window {
            file: Arc::clone(file),
            base: magic,
        }),
        bytes,
        format!("{}@0x{magic:x}", image.display()),
    ));
    let g = match crate::nbg::open::parse_source(source, Options::default())? {
        Ok(g) => g,
        Err(f) => return Ok(Err(f)),
    };
    use crate::nbg::crc_rules::CrcClass;
    let crc = g.crc_summary();
    if let Some(f) = crc.unexplained() {
        return Ok(Err(f));
    }
    let integrity = match g.crc_class() {
        // v2: the parser enforces its checksums.
        None | Some(CrcClass::Matches | CrcClass::Unexplained) => Integrity::Crc,
        Some(CrcClass::Absent) => Integrity::StructureOnly,
    };
    let (version, target) = (g.version(), g.target());
    Ok(Ok(Found {
        offset: magic,
        bytes,
        format: g.format(),
        version: format!("0x{version:08x}"),
        target: crate::nbg::format::target_hex(target),
        sha256: g.file().sha256,
        trailer_bytes,
        integrity,
        extracted: None,
    }))
}
