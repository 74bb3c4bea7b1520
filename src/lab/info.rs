//! What a board user asks of one file first (`nbg info`): which format and version, which
//! chip, what goes in and out, where the time goes (operations per engine), where the bytes go
//! (the byte-ownership ledger by content) and whether the CRC holds. Built from a parse with
//! positioned reads and the ledger over file ranges, so a large file is streamed once.

use crate::digest::Hash256;
use crate::files::InputError;
use crate::nbg::failure::Failure;
use crate::nbg::family::NbgFamily as _;
use crate::nbg::family::Origin;
use crate::nbg::family::OwnerClass;
use crate::nbg::format::Content;
use crate::nbg::image::NbgImage;
use crate::nbg::parse::{Graph, IoRecord};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A driver configuration: its name and the PID it simulates.
#[derive(Clone, Debug, Serialize)]
pub struct Configuration {
    /// The configuration's name (`VIP9000NANOS_PID0X1000000E`).
    pub name: String,
    /// Its PID.
    pub pid: u32,
}

/// One file's answers.
#[derive(Clone, Debug, Serialize)]
pub struct Info {
    /// The path as given.
    pub file: String,
    /// The file's size in bytes.
    pub file_size: u64,
    /// SHA-256 of the file.
    pub sha256: Hash256,
    /// `nbg-v1` or `nbg-v2`.
    pub format: &'static str,
    /// The version word, `0x0001001e`.
    pub version: String,
    /// v1: where the version's layout comes from (`proved`, `vendor-reader`,
    /// `bounded-unknown`); `None` for v2.
    pub layout_evidence: Option<crate::nbg::format::v1::LayoutEvidence>,
    /// The target word (the NPU's PID), `0x1000003b`.
    pub target: String,
    /// The driver configurations that carry the target's PID; `None` when the driver is not
    /// installed (unknown, not none).
    pub configurations: Option<Vec<String>>,
    /// The network name.
    pub network: String,
    /// Inputs in order.
    pub inputs: Vec<Tensor>,
    /// Outputs in order.
    pub outputs: Vec<Tensor>,
    /// Operations per engine, most first; `None` when the operation table is not decoded.
    pub engines: Option<Vec<Engine>>,
    /// The INIT and END records `engines` leaves out, by name (only those the file has).
    pub engines_left_out: BTreeMap<&'static str, u64>,
    /// Bytes per content, from the ledger (every byte in exactly one).
    pub bytes_by_content: Vec<SizeShare>,
    /// `file_size` under its former key, kept for one release.
    #[serde(rename = "bytes")]
    pub former_bytes: u64,
    /// `bytes_by_content` under its former key, kept for one release.
    #[serde(rename = "size")]
    pub former_size: Vec<SizeShare>,
    /// How far the bytes are decoded, from the ledger's owner classes.
    pub decoding: Decoding,
    /// Patch records resolved to their field and source (`nbg patches`); `None` where the
    /// patch table is not decoded.
    pub patches: Option<Patches>,
    /// What the runtime allocates beside the file: will it fit.
    pub memory: Memory,
    /// The CRC status.
    pub crc: Crc,
}

/// Bytes by how far they are decoded: records and command streams re-encoded from their
/// fields (of them, the bytes in fields named unknown), opaque payloads, and the gaps between
/// (alignment, padding, an unowned tail).
#[derive(Clone, Debug, Serialize)]
pub struct Decoding {
    /// Bytes of decoded-record owners.
    pub decoded_bytes: u64,
    /// Of those, bytes in fields the field map names unknown.
    pub unknown_field_bytes: u64,
    /// Bytes of preserved-opaque owners.
    pub opaque_bytes: u64,
    /// Alignment, padding and connection-tail bytes: what `bytes_by_content` calls padding.
    pub padding_bytes: u64,
    /// `padding_bytes` under its former key, kept for one release.
    pub gap_bytes: u64,
    /// The opaque bytes grouped by why they are not decoded (reason and decoder code), most
    /// bytes first.
    pub undecoded: Vec<UndecodedGroup>,
}

/// Opaque bytes that share a reason.
#[derive(Clone, Debug, Serialize)]
pub struct UndecodedGroup {
    /// Why.
    pub reason: crate::nbg::family::UndecodedReason,
    /// The decoder's code or the payload's role, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Bytes.
    pub bytes: u64,
    /// Owners.
    pub owners: u64,
    /// The first owner's label and where its decoder stopped.
    pub first: String,
}

fn decoding(graph: &Graph<'_>, image: &NbgImage<'_>) -> Decoding {
    let mut d = Decoding {
        decoded_bytes: 0,
        unknown_field_bytes: graph.unknown_field_bytes(),
        opaque_bytes: 0,
        padding_bytes: 0,
        gap_bytes: 0,
        undecoded: undecoded(image),
    };
    for o in image.owners() {
        let n = o.end - o.start;
        match o.class {
            OwnerClass::DecodedRecord => d.decoded_bytes += n,
            OwnerClass::PreservedOpaque => d.opaque_bytes += n,
            _ => d.padding_bytes += n,
        }
    }
    d.gap_bytes = d.padding_bytes;
    d
}

/// The opaque owners grouped by reason and code, most bytes first (then by reason and code).
pub fn undecoded(image: &NbgImage<'_>) -> Vec<UndecodedGroup> {
    use crate::nbg::family::UndecodedReason;
    let mut groups: BTreeMap<(UndecodedReason, Option<String>), UndecodedGroup> = BTreeMap::new();
    for o in image
        .owners()
        .iter()
        .filter(|o| o.class == OwnerClass::PreservedOpaque)
    {
        let u = o
            .undecoded
            .clone()
            .unwrap_or(crate::nbg::family::Undecoded::of(
                UndecodedReason::FormatUnknown,
            ));
        let g = groups
            .entry((u.reason, u.code.clone()))
            .or_insert_with(|| UndecodedGroup {
                reason: u.reason,
                code: u.code.clone(),
                bytes: 0,
                owners: 0,
                first: match &u.detail {
                    Some(d) => format!("{} ({d})", o.label),
                    None => o.label.clone(),
                },
            });
        g.bytes += o.len();
        g.owners += 1;
    }
    let mut out: Vec<UndecodedGroup> = groups.into_values().collect();
    out.sort_by_key(|g| std::cmp::Reverse(g.bytes));
    out
}

/// How many patch records name the field they relocate and what they point to.
#[derive(Clone, Debug, Serialize)]
pub struct Patches {
    /// Patch records.
    pub records: u64,
    /// Of them, resolved to a named field and source.
    pub resolved: u64,
    /// Of them, all-zero records no patch range holds.
    pub unused: u64,
}

/// An input or output.
#[derive(Clone, Debug, Serialize)]
pub struct Tensor {
    /// Position.
    pub index: usize,
    /// Name, when the record has one.
    pub name: Option<String>,
    /// Dimensions as stored (innermost first, as the runtime lists them).
    pub shape: Vec<u32>,
    /// The same dimensions outermost first: the shape `vendor run` wants an NPZ array in.
    pub npz_shape: Vec<u32>,
    /// Element type (`UINT8`), or the raw format word when it has no public name.
    pub element_type: String,
    /// Quantization format (`AFFINE_ASYMMETRIC`, `DYNAMIC_FIXED_POINT`, `NONE`), or the raw
    /// word when unnamed: `parse`'s `quantization_format`.
    pub quantization_format: String,
    /// `quantization_format` under its former key, kept for one release (in `parse`,
    /// `quantization` is the record the field map decodes).
    pub quantization: String,
    /// Affine scale.
    pub scale: Option<f32>,
    /// Affine zero point.
    pub zero_point: Option<i32>,
    /// Dynamic fixed-point position.
    pub fixed_point_position: Option<i32>,
    /// Storage in bytes; `None` for a format without a public element width.
    pub storage_bytes: Option<u64>,
}

/// Operations of one engine.
#[derive(Clone, Debug, Serialize)]
pub struct Engine {
    /// `NN`, `TP`, `SH`, `SW`, `NN_LUT`, ..., or `type N` for an unnamed type.
    pub engine: String,
    /// Operation records of the engine.
    pub operations: u64,
    /// Its share of the engine operations (INIT and END records left out), in percent.
    pub share_percent: f64,
}

/// The working memory the file declares.
#[derive(Clone, Debug, Serialize)]
pub struct Memory {
    /// The memory pool (intermediate tensors), when declared.
    pub pool_bytes: Option<u64>,
    /// AXI SRAM used, when declared.
    pub axi_sram_bytes: Option<u32>,
    /// VIP SRAM used, when declared.
    pub vip_sram_bytes: Option<u32>,
}

/// Bytes of one content.
#[derive(Clone, Debug, Serialize)]
pub struct SizeShare {
    /// What the bytes are.
    pub content: Content,
    /// How many.
    pub bytes: u64,
    /// Share of the file, in percent.
    pub share_percent: f64,
}

/// Whether the file's CRC holds.
#[derive(Clone, Debug, Serialize)]
pub struct Crc {
    /// `matches`, `absent` (a v1 zero field) or `unexplained` for v1; `matches` for v2 (the
    /// parser refuses a v2 file whose CRC does not hold).
    pub status: crate::nbg::crc_rules::CrcClass,
    /// The rule that reproduces it, when one does.
    pub rule: Option<String>,
    /// The stored value.
    pub stored: u32,
}

/// Percent with two decimals, so the JSON is stable.
fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 10_000.0 / whole as f64).round() / 100.0
    }
}

fn tensor(r: &IoRecord) -> Tensor {
    let q = &r.quantization;
    let quantization_format = q
        .format_name
        .map_or_else(|| format!("format {}", q.format), str::to_string);
    Tensor {
        index: r.index,
        name: r.name.clone(),
        shape: r.dimensions.clone(),
        npz_shape: r.dimensions.iter().rev().copied().collect(),
        element_type: r
            .data_format_name
            .map_or_else(|| format!("format {}", r.data_format), str::to_string),
        quantization: quantization_format.clone(),
        quantization_format,
        scale: q.scale,
        zero_point: q.zero_point,
        fixed_point_position: q.fixed_point_position,
        storage_bytes: r.storage_bytes,
    }
}

/// The INIT and END records the engine counts leave out, by name (only those present).
fn left_out(ops: &[crate::nbg::parse::records::Operation]) -> BTreeMap<&'static str, u64> {
    use crate::nbg::format::records::operation_type::{END, INIT};
    let mut out = BTreeMap::new();
    for (kind, name) in [(INIT, "INIT"), (END, "END")] {
        let n = ops.iter().filter(|o| o.kind() == kind).count() as u64;
        if n > 0 {
            out.insert(name, n);
        }
    }
    out
}

fn engines(ops: &[crate::nbg::parse::records::Operation]) -> Vec<Engine> {
    use crate::nbg::format::records::operation_type::{END, INIT};
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for o in ops.iter().filter(|o| o.kind() != INIT && o.kind() != END) {
        let name = o
            .type_name()
            .map_or_else(|| format!("type {}", o.kind()), str::to_string);
        *counts.entry(name).or_default() += 1;
    }
    let total: u64 = counts.values().sum();
    let mut out: Vec<Engine> = counts
        .into_iter()
        .map(|(engine, operations)| Engine {
            share_percent: percent(operations, total),
            engine,
            operations,
        })
        .collect();
    out.sort_by(|a, b| {
        b.operations
            .cmp(&a.operations)
            .then(a.engine.cmp(&b.engine))
    });
    out
}

/// The content of each ledger owner: structure for headers and fixed parts, the section
/// type's content for sections and tables, padding for gaps and the unowned tail.
fn size(graph: &Graph<'_>, image: &NbgImage<'_>) -> Vec<SizeShare> {
    let mut bytes: BTreeMap<Content, u64> = BTreeMap::new();
    for o in image.owners() {
        let content = match (o.class, &o.origin) {
            (OwnerClass::Alignment | OwnerClass::Padding | OwnerClass::ConnectionTail, _) => {
                Content::Padding
            }
            (_, Origin::Structure) => Content::Structure,
            (_, Origin::Extension | Origin::Gap | Origin::Tail) => Content::Other,
            (_, origin) => graph.owner_content(origin),
        };
        *bytes.entry(content).or_default() += o.len();
    }
    let total = image.owners().iter().map(|o| o.len()).sum();
    bytes
        .into_iter()
        .map(|(content, b)| SizeShare {
            content,
            bytes: b,
            share_percent: percent(b, total),
        })
        .collect()
}

/// The answers for `path`, given the driver's configurations when it is installed. `Err` is an
/// input error; `Ok(Err)` an invalid NBG.
pub fn info(
    path: &Path,
    configurations: Option<&[Configuration]>,
) -> Result<Result<Info, Failure>, InputError> {
    let (source, built) = crate::nbg::open::open_image(path)?;
    let (graph, image) = match built {
        Ok(b) => b,
        Err(f) => return Ok(Err(f)),
    };
    if let Some(e) = source.error() {
        return Err(e);
    }
    let m = graph.memory();
    let memory = Memory {
        pool_bytes: m.pool_bytes,
        axi_sram_bytes: m.axi_sram_bytes,
        vip_sram_bytes: m.vip_sram_bytes,
    };
    let (version, target) = (graph.version(), graph.target());
    let c = graph.crc_summary();
    let crc = Crc {
        status: c.status,
        rule: c.rule,
        stored: c.stored,
    };
    let by_content = size(&graph, &image);
    Ok(Ok(Info {
        file: path.display().to_string(),
        file_size: graph.file().size,
        sha256: graph.file().sha256,
        format: graph.format(),
        version: format!("0x{version:08x}"),
        layout_evidence: graph.layout_evidence(),
        target: crate::nbg::format::target_hex(target),
        configurations: configurations.map(|c| {
            c.iter()
                .filter(|c| c.pid == target)
                .map(|c| c.name.clone())
                .collect()
        }),
        network: graph.network_name(),
        inputs: graph.inputs().iter().map(tensor).collect(),
        outputs: graph.outputs().iter().map(tensor).collect(),
        engines: graph.records().operations.as_deref().map(engines),
        engines_left_out: graph
            .records()
            .operations
            .as_deref()
            .map(left_out)
            .unwrap_or_default(),
        bytes_by_content: by_content.clone(),
        former_bytes: graph.file().size,
        former_size: by_content,
        decoding: decoding(&graph, &image),
        patches: graph.patch_targets().map(|t| Patches {
            records: t.patches,
            resolved: t.resolved,
            unused: t.unused,
        }),
        memory,
        crc,
    }))
}
