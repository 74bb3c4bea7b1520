//! Layers, operations, SH operations and patches: the records both families share (v2 sections
//! 3, 4, 9 and 10; the v1 layer, operation, sh and patch tables), decoded from bounded slices and
//! cross-checked against each other.
//!
//! Check order: record sizes (by the caller), layer names (`invalid-name`), then per operation
//! its layer (`operation-layer-out-of-range`), patch range (`operation-patch-out-of-range`),
//! engine index (`operation-index-out-of-range`) and state id (`operation-state-out-of-range`),
//! then SH records (`sh-instruction-out-of-range`), then the layers' declared operation counts
//! (`layer-operation-count`: together at most the operations that name a layer). Every rule
//! holds on the 22 public v1 files. A single layer's declared count is not a rule: public files
//! split one layer across several engine operations (declared 1, named 11) and end with a layer
//! no operation names (declared 1, named 0); `named_operations` reports the derived count.

use crate::failure::{Code, Failure, fail};
use crate::fieldmap::{
    self as fm, layer as fl, operation as fo, patch_40bit as fp, sh_operation as fs,
};
use crate::format::records::{self as rec, operation_type, source_type};
use crate::read::fixed_name;
use serde::Serialize;
use std::collections::BTreeMap;

/// One decoded table: its file offset, bytes (already bounds-checked) and record size (the
/// table's size is already a multiple of it).
#[derive(Clone, Copy, Debug)]
pub struct Slice<'a> {
    pub offset: u64,
    pub bytes: &'a [u8],
    pub record_size: u64,
}

impl Slice<'_> {
    fn count(&self) -> u64 {
        self.bytes.len() as u64 / self.record_size
    }

    fn records(&self) -> impl Iterator<Item = (usize, u64, &[u8])> {
        let size = self.record_size;
        self.bytes
            .chunks_exact(size as usize)
            .enumerate()
            .map(move |(i, r)| (i, self.offset + i as u64 * size, r))
    }
}

/// What the decoder reads, and the record counts references are checked against.
#[derive(Clone, Copy, Debug)]
pub struct Tables<'a> {
    /// A missing layer or operation table decodes as empty (and is reported `None`).
    pub layer: Option<Slice<'a>>,
    pub operation: Option<Slice<'a>>,
    pub sh: Option<Slice<'a>>,
    pub patch: Option<Slice<'a>>,
    /// NN and TP command records (for the operation index check), when their size is known.
    pub nn_records: Option<u64>,
    pub tp_records: Option<u64>,
    /// (label, entries) of the table operation state ids index.
    pub state_table: Option<(&'static str, u64)>,
    /// Entries of the PPU instruction table SH records index, where the version has one.
    pub ppu_instr_entries: Option<u64>,
}

/// The decoded records, flattened into the parse document.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Records {
    /// `None` when the record layout of the version is not proved.
    pub layers: Option<Vec<Layer>>,
    pub operations: Option<Vec<Operation>>,
    pub sh_operations: Option<Vec<ShOperation>>,
    pub patches: Option<PatchSummary>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Layer {
    pub index: usize,
    pub offset: u64,
    pub name: String,
    /// Public name `node_id`.
    pub id: u32,
    pub uid: u32,
    /// As declared by the record.
    pub operation_count: u32,
    /// Operations whose `layer_id` names this layer (derived; may differ from the declared
    /// count, see the module note).
    pub named_operations: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Operation {
    /// Position in the operation table.
    pub index: usize,
    pub offset: u64,
    #[serde(rename = "type")]
    pub kind: u32,
    pub type_name: Option<&'static str>,
    /// The record's own `index` word: position within its engine's records (NN/TP command,
    /// SH record); 0xffff for INIT.
    pub engine_index: u32,
    pub layer_id: u32,
    pub state_id: u32,
    pub patch_index: u32,
    pub patch_count: u32,
    /// Bits 0..4 of the word at +0x18 (records of 28 bytes or more).
    pub preempt: Option<u32>,
    /// Bits 4..32 of the word at +0x18.
    pub abs_share_id: Option<u32>,
    /// The word at +0x1c (32-byte records).
    pub abs_op_id: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShOperation {
    pub index: usize,
    pub instr_index: u32,
    /// Absent in 4-byte records (v1 before 0x0001000e).
    pub ppu_param_index: Option<u32>,
}

/// Patches are many (thousands per public graph): counted per source type, not listed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PatchSummary {
    pub count: u64,
    pub record_size: u64,
    /// Public source-type name (or `unknown-N`) to record count.
    pub by_source_type: BTreeMap<String, u64>,
    /// Every record, decoded (kept for the round trip; the document lists only the summary).
    #[serde(skip)]
    pub records: Vec<Patch>,
}

/// One patch record (`nbg_section_patch_table`, or its 40-bit-VA form).
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    pub kind: u32,
    pub dest_offset: u32,
    pub source_type: u32,
    pub index: i32,
    pub src_offset: u32,
    pub transformed: u32,
    /// Absent in 24-byte records (v1 before 0x00010006).
    pub name: Option<u32>,
    /// `dest_offset_h`, `src_offset_h`, `mask_h` of 40-byte records.
    pub high: Option<[u32; 3]>,
}

/// Patch records through the field map: the 28-byte public record (or its older 24-byte form)
/// or the 40-bit-VA 40-byte record, whose first seven words are the same fields.
fn decode_patches(p: Slice<'_>) -> Result<PatchSummary, Failure> {
    let mut by_source_type = BTreeMap::new();
    let mut records = Vec::with_capacity(p.count() as usize);
    let wide = p.record_size == fp::SIZE as u64;
    for (_, offset, r) in p.records() {
        let v = if wide {
            super::view(&fp::RECORD, r, offset)?
        } else {
            super::view(&fm::patch::RECORD, r, offset)?
        };
        let kind = v.u32(&fp::source_type);
        let name =
            source_type::name(kind).map_or_else(|| format!("unknown-{kind}"), str::to_string);
        *by_source_type.entry(name).or_insert(0) += 1;
        records.push(Patch {
            kind: v.u32(&fp::kind),
            dest_offset: v.u32(&fp::dest_offset),
            source_type: kind,
            index: v.u32(&fp::index) as i32,
            src_offset: v.u32(&fp::src_offset),
            transformed: v.u32(&fp::transformed),
            name: v.opt_u32(&fp::name),
            high: wide.then(|| {
                [
                    v.u32(&fp::dest_offset_h),
                    v.u32(&fp::src_offset_h),
                    v.u32(&fp::mask_h),
                ]
            }),
        });
    }
    Ok(PatchSummary {
        count: p.count(),
        record_size: p.record_size,
        by_source_type,
        records,
    })
}

/// Decode and cross-check the records.
pub fn decode(t: &Tables<'_>) -> Result<Records, Failure> {
    let empty = Slice {
        offset: 0,
        bytes: &[],
        record_size: 1,
    };
    let layer = t.layer.unwrap_or(empty);
    let operation = t.operation.unwrap_or(empty);
    let layers = layer
        .records()
        .map(|(index, offset, r)| {
            let v = super::view(&fl::RECORD, r, offset)?;
            let Some(name) = fixed_name(v.bytes(&fl::name)) else {
                return fail(
                    Code::InvalidName,
                    offset,
                    format!(
                        "layer {index} name is not NUL-terminated strict UTF-8 within 64 bytes"
                    ),
                );
            };
            Ok(Layer {
                index,
                offset,
                name: name.to_string(),
                id: v.u32(&fl::id),
                uid: v.u32(&fl::uid),
                operation_count: v.u32(&fl::operation_count),
                named_operations: 0,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let [preempt, abs_share_id] = [0, 1].map(|i| fo::preempt_word.parts[i]);
    let operations: Vec<Operation> = operation
        .records()
        .map(|(index, offset, r)| {
            let v = super::view(&fo::RECORD, r, offset)?;
            let kind = v.u32(&fo::kind);
            let word = v.opt_u32(&fo::preempt_word).map(u64::from);
            Ok(Operation {
                index,
                offset,
                kind,
                type_name: operation_type::name(kind),
                engine_index: v.u32(&fo::index),
                layer_id: v.u32(&fo::layer_id),
                state_id: v.u32(&fo::state_id),
                patch_index: v.u32(&fo::patch_index),
                patch_count: v.u32(&fo::patch_count),
                preempt: word.map(|w| preempt.get(w) as u32),
                abs_share_id: word.map(|w| abs_share_id.get(w) as u32),
                abs_op_id: v.opt_u32(&fo::abs_op_id),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sh_operations: Option<Vec<ShOperation>> =
        t.sh.map(|s| {
            s.records()
                .map(|(index, offset, r)| {
                    let v = super::view(&fs::RECORD, r, offset)?;
                    Ok(ShOperation {
                        index,
                        instr_index: v.u32(&fs::instr_index),
                        ppu_param_index: v.opt_u32(&fs::ppu_param_index),
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let patch_count = t.patch.map(|p| p.count());

    let mut per_layer = vec![0u64; layers.len()];
    for o in &operations {
        let at = |field: usize| o.offset + field as u64;
        let unattached = matches!(o.kind, operation_type::INIT | operation_type::END);
        if unattached && o.layer_id == rec::NO_LAYER {
            // INIT and END belong to no layer.
        } else if let Some(n) = per_layer.get_mut(o.layer_id as usize) {
            *n += 1;
        } else {
            return fail(
                Code::OperationLayerOutOfRange,
                at(fo::layer_id.offset),
                format!(
                    "operation {} names layer {} but the layer table holds {} records",
                    o.index,
                    o.layer_id,
                    layers.len()
                ),
            );
        }
        if let Some(patches) = patch_count.filter(|_| o.patch_count > 0) {
            let end = u64::from(o.patch_index) + u64::from(o.patch_count);
            if end > patches {
                return fail(
                    Code::OperationPatchOutOfRange,
                    at(fo::patch_index.offset),
                    format!(
                        "operation {} patches [{}, {end}) leave the {patches}-record patch table",
                        o.index, o.patch_index
                    ),
                );
            }
        }
        let engine = match o.kind {
            operation_type::NN => t.nn_records.map(|n| ("NN", n)),
            operation_type::TP => t.tp_records.map(|n| ("TP", n)),
            operation_type::SH => t.sh.map(|s| ("SH", s.count())),
            _ => None,
        };
        if let Some((name, n)) = engine.filter(|&(_, n)| u64::from(o.engine_index) >= n) {
            return fail(
                Code::OperationIndexOutOfRange,
                at(fo::index.offset),
                format!(
                    "{name} operation {} has index {} but the {name} table holds {n} records",
                    o.index, o.engine_index
                ),
            );
        }
        if let Some((label, n)) = t.state_table.filter(|_| !unattached) {
            if u64::from(o.state_id) >= n {
                return fail(
                    Code::OperationStateOutOfRange,
                    at(fo::state_id.offset),
                    format!(
                        "operation {} has state id {} but the {label} holds {n} entries",
                        o.index, o.state_id
                    ),
                );
            }
        }
    }
    if let (Some(sh), Some(s), Some(n)) = (&sh_operations, t.sh, t.ppu_instr_entries) {
        if let Some(bad) = sh.iter().find(|r| u64::from(r.instr_index) >= n) {
            return fail(
                Code::ShInstructionOutOfRange,
                s.offset + bad.index as u64 * s.record_size,
                format!(
                    "SH record {} names PPU instruction entry {} but the table holds {n} entries",
                    bad.index, bad.instr_index
                ),
            );
        }
    }
    // A layer may declare fewer operations than name it (one layer split across engines) or
    // more (public files end with a layer no operation names), but the layers together never
    // declare more operations than the table holds.
    let declared: u64 = layers.iter().map(|l| u64::from(l.operation_count)).sum();
    let attached: u64 = per_layer.iter().sum();
    if declared > attached {
        return fail(
            Code::LayerOperationCount,
            layer.offset,
            format!(
                "the layers declare {declared} operations but only {attached} operations name a layer"
            ),
        );
    }
    let mut layers = layers;
    for (l, &named) in layers.iter_mut().zip(&per_layer) {
        l.named_operations = named;
    }

    let patches = t.patch.map(decode_patches).transpose()?;
    Ok(Records {
        layers: t.layer.map(|_| layers),
        operations: t.operation.map(|_| operations),
        sh_operations,
        patches,
    })
}

/// v1 versions whose layer, operation, sh and patch record sizes the public corpus proves
/// (every reference check holds on every public file of the version).
pub const V1_PROVED_VERSIONS: [u32; 5] = [
    0x0001_000c,
    0x0001_000e,
    0x0001_0014,
    0x0001_0016,
    0x0001_001e,
];

/// Whether the v1 parser decodes the records of table `name` for `version`.
pub fn v1_decodes(name: &str, version: u32) -> bool {
    V1_PROVED_VERSIONS.contains(&version) && matches!(name, "layer" | "operation" | "sh" | "patch")
}

/// Rows the text summary lists per table; `--json` lists every record.
const SUMMARY_ROWS: usize = 32;

impl Records {
    /// The layer and operation tables of the text summary.
    pub fn summary(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let (Some(layers), Some(operations)) = (&self.layers, &self.operations) else {
            let _ = writeln!(
                s,
                "\nlayers and operations: not decoded (record layout not proved for this version)"
            );
            return s;
        };
        let more = |s: &mut String, n: usize| {
            if n > SUMMARY_ROWS {
                let _ = writeln!(s, "  ... {} more (--json lists all)", n - SUMMARY_ROWS);
            }
        };
        let _ = writeln!(s, "\nlayers ({}):", layers.len());
        let _ = writeln!(
            s,
            "  {:>4} {:<40} {:>6} {:>8} {:>4}",
            "#", "name", "id", "uid", "ops"
        );
        for l in layers.iter().take(SUMMARY_ROWS) {
            let _ = writeln!(
                s,
                "  {:>4} {:<40} {:>6} {:>8} {:>4}",
                l.index, l.name, l.id, l.uid, l.operation_count
            );
        }
        more(&mut s, layers.len());
        let _ = writeln!(s, "\noperations ({}):", operations.len());
        let _ = writeln!(
            s,
            "  {:>4} {:<6} {:>6} {:>6} {:>6} {:>8}",
            "#", "type", "index", "layer", "state", "patches"
        );
        for o in operations.iter().take(SUMMARY_ROWS) {
            let _ = writeln!(
                s,
                "  {:>4} {:<6} {:>6} {:>6} {:>6} {:>8}",
                o.index,
                o.type_name
                    .map_or_else(|| o.kind.to_string(), str::to_string),
                o.engine_index,
                o.layer_id,
                o.state_id,
                format!("{}+{}", o.patch_index, o.patch_count)
            );
        }
        more(&mut s, operations.len());
        if let Some(p) = &self.patches {
            let kinds: Vec<String> = p
                .by_source_type
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            let _ = writeln!(
                s,
                "patches: {} records of {} bytes ({})",
                p.count,
                p.record_size,
                kinds.join(", ")
            );
        }
        s
    }
}

/// A table read by the family parsers' glue (`v1::records`, `v2::records`): (file offset, record size, bytes).
pub(super) type ReadTable<'a> = Option<(u64, u64, std::borrow::Cow<'a, [u8]>)>;

pub(super) fn as_slice<'b>(table: &'b ReadTable<'_>) -> Option<Slice<'b>> {
    table.as_ref().map(|(offset, record_size, bytes)| Slice {
        offset: *offset,
        bytes,
        record_size: *record_size,
    })
}
