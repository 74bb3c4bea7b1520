//! Layers, operations, SH operations and patches: the records both families share (v2 sections
//! 3, 4, 9 and 10; the v1 layer, operation, sh and patch tables), plus the v1-only SW operation,
//! hardware-init operation and PPU parameter tables, decoded from bounded slices and
//! cross-checked against each other.
//!
//! Every refusal here is a broken cross-reference (basis `format`, `docs/failure-codes.md`): an
//! index that leaves the table it indexes. Check order: record sizes (by the caller), layer and
//! SW operation names (`invalid-name`), then per operation its layer
//! (`operation-layer-out-of-range`), patch range (`operation-patch-out-of-range`), engine index
//! (`operation-index-out-of-range`; an SW operation indexes the SW table, as the public VIPLite
//! runtime reads it) and state id (`operation-state-out-of-range`), then SH records
//! (`sh-instruction-out-of-range`, and `sh-ppu-param-out-of-range` where the feature database
//! sets `change_ppu_param`: only then does the public runtime read the PPU parameter table), then
//! hardware-init records (patch range `hw-init-patch-out-of-range`; state id
//! `hw-init-state-out-of-range` against the ICD table, which the public runtime indexes with it).
//! An INIT or END operation names no layer with either sentinel producers wrote
//! (`format::records::NO_LAYER_IDS`). An SW operation type outside the public enum is reported
//! (`type_name` null), never refused.
//!
//! Relations only a corpus showed are reported (`corpus_invariants`), never refused: the layers
//! together declaring at most the operations that name a layer held on the spec's corpus and the
//! public v1 files, but the simulator driver's 0x00020005 files break it (a layer counts a
//! hardware-init operation the table does not list). A single layer's declared count was never
//! a rule: public files split one layer across several engine operations (declared 1, named 11)
//! and end with a layer no operation names (declared 1, named 0); `named_operations` reports the
//! derived count.

use crate::nbg::decoded::{Decoded, Fields, ReadFields, Unreadable};
use crate::nbg::failure::{Code, Failure, collect_records, fail};
use crate::nbg::fieldmap::View;
use crate::nbg::fieldmap::{
    self as fm, hw_init_operation as fh, layer as fl, operation as fo, patch_40bit as fp,
    sh_operation as fs, v1_ppu_param as fpp, v1_sw_operation as fsw,
};
use crate::nbg::format::records::{NO_LAYER_IDS, operation_type, source_type, sw_operation_type};
use crate::nbg::read::NameTail;
use serde::Serialize;
use serde::ser::SerializeStruct;
use std::collections::BTreeMap;

/// One decoded table: its file offset, bytes (already bounds-checked) and record size (the
/// table's size is already a multiple of it).
#[derive(Clone, Copy, Debug)]
pub struct Slice<'a> {
    /// File offset of the first record.
    pub offset: u64,
    /// The table's bytes.
    pub bytes: &'a [u8],
    /// Bytes per record.
    pub record_size: u64,
}

impl<'a> Slice<'a> {
    fn count(&self) -> u64 {
        self.bytes.len() as u64 / self.record_size
    }

    fn records(self) -> impl ExactSizeIterator<Item = (usize, u64, &'a [u8])> {
        let size = self.record_size;
        self.bytes
            .chunks_exact(crate::nbg::read::index(size))
            .enumerate()
            .map(move |(i, r)| (i, self.offset + i as u64 * size, r))
    }
}

/// An (offset, size) index table (load states, PPU instructions): 8-byte records whose sizes
/// say how many bytes the entry an operation or SH record names holds.
#[derive(Clone, Copy, Debug)]
pub struct Index<'a> {
    /// What the failure messages call it.
    pub label: &'static str,
    /// The table's bytes (a trailing partial record is not an entry).
    pub bytes: &'a [u8],
}

impl Index<'_> {
    /// Whole 8-byte entries.
    pub fn entries(&self) -> u64 {
        self.bytes.len() as u64 / 8
    }

    /// The size word of entry `i`, when there is one.
    pub fn size(&self, i: u32) -> Option<u32> {
        let at = usize::try_from(i).ok()?.checked_mul(8)?;
        let w = self.bytes.get(at + 4..at + 8)?;
        Some(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    }
}

/// What the decoder reads, and the record counts references are checked against.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tables<'a> {
    /// A missing layer or operation table decodes as empty (and is reported `None`).
    pub layer: Option<Slice<'a>>,
    /// The operation table.
    pub operation: Option<Slice<'a>>,
    /// The SH operation table.
    pub sh: Option<Slice<'a>>,
    /// The patch table.
    pub patch: Option<Slice<'a>>,
    /// The patch table's offset, record size and count when its records are not read
    /// (check-only mode: no rule reads a patch record, so a sweep's flip of one changes only
    /// checksums).
    pub patch_unread: Option<(u64, u64, u64)>,
    /// NN and TP command records (for the operation index check), when their size is known.
    pub nn_records: Option<u64>,
    /// TP command records, when their size is known.
    pub tp_records: Option<u64>,
    /// The table operation state ids index (load states, or v1's lcd table before them).
    pub state_table: Option<Index<'a>>,
    /// The PPU instruction table SH records index, where the version has one.
    pub ppu_instr_table: Option<Index<'a>>,
    /// The v2 COEF_DATA_TABLE, which patches of source type 5 index.
    pub coef_table: Option<Index<'a>>,
    /// Bytes of one NN command record (the network attribute or feature database's code).
    pub nn_command_bytes: Option<u32>,
    /// Bytes of one TP command record.
    pub tp_command_bytes: Option<u32>,
    /// v1 SW operation, hardware-init operation and PPU parameter tables, where decoded.
    pub sw: Option<Slice<'a>>,
    /// The v1 hardware-init operation table.
    pub hw_init: Option<Slice<'a>>,
    /// The v1 PPU parameter table.
    pub ppu_param: Option<Slice<'a>>,
    /// Entries of the ICD table hardware-init state ids index (v1 from 0x0001000c).
    pub icd_entries: Option<u64>,
    /// Whether SH records' `ppu_param_index` references the PPU parameter table (the v1
    /// feature database's `change_ppu_param`).
    pub ppu_params_referenced: bool,
}

/// The decoded records, flattened into the parse document.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Records {
    /// `None` when the record layout of the version is not proved.
    pub layers: Option<Vec<Layer>>,
    /// The operation table, `None` when its layout is not proved.
    pub operations: Option<Vec<Operation>>,
    /// The SH operation table, `None` when its layout is not proved.
    pub sh_operations: Option<Vec<ShOperation>>,
    /// The patch table, `None` when its layout is not proved.
    pub patches: Option<PatchSummary>,
    /// v1 only (absent from v2 documents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sw_operations: Option<Vec<SwOperation>>,
    /// The hardware-init operations (v1 hw_init table, v2 section 13); absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hw_init_operations: Option<Vec<HwInitOperation>>,
    /// v1 only: the PPU parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ppu_params: Option<Vec<PpuParam>>,
}

/// Accessors of a typed record, each reading one field of its decoded values (`fields`), so a
/// record's document and checks read what its re-encoding writes.
macro_rules! accessors {
    ($module:ident; $($(#[$doc:meta])* $method:ident: $field:ident -> $ty:ident;)*) => {
        $(
            $(#[$doc])*
            pub fn $method(&self) -> $crate::nbg::parse::records::accessors!(@ty $ty) {
                $crate::nbg::parse::records::accessors!(@get $ty, self.fields, $module::$field)
            }
        )*
    };
    (@ty u32) => { u32 };
    (@ty opt) => { Option<u32> };
    (@get u32, $d:expr, $f:expr) => { $d.u32(&$f) };
    (@get opt, $d:expr, $f:expr) => { $d.opt_u32(&$f) };
}
pub(crate) use accessors;

/// A string field's text and kept tail (empty when the instance does not hold it).
pub(crate) fn text<'a>(d: &'a Decoded, f: &fm::Field) -> (Option<&'a str>, &'a NameTail) {
    static EMPTY: NameTail = NameTail(Vec::new());
    d.name(f)
        .map_or((None, &EMPTY), |(t, tail)| (Some(t), tail))
}

/// One `nbg_section_sw_operation` record.
#[derive(Clone, Debug, PartialEq)]
pub struct SwOperation<F = Decoded> {
    /// Position in the SW operation table.
    pub index: usize,
    /// File offset of the record.
    pub offset: u64,
    /// The record's values: what the accessors read and the re-encoding writes (a view of
    /// the bytes in check-only mode).
    pub fields: F,
}

impl<F: Fields> SwOperation<F> {
    accessors! { fsw;
        /// The record's `type` word (`sw_operation_type_e`).
        kind: sw_operation_type -> u32;
    }

    /// Public SW operation type name (NONE, RPN, USER_CPU, RPN_SORT_NMS); `None` when unknown.
    pub fn type_name(&self) -> Option<&'static str> {
        sw_operation_type::name(self.kind())
    }
}

impl SwOperation {
    /// The name; absent in 4-byte records (v1 before 0x00010009).
    pub fn name(&self) -> Option<&str> {
        text(&self.fields, &fsw::name).0
    }

    /// The bytes after the name's NUL, kept and re-encoded exactly.
    pub fn name_trailing_bytes(&self) -> &NameTail {
        text(&self.fields, &fsw::name).1
    }
}

impl Serialize for SwOperation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (name, tail) = text(&self.fields, &fsw::name);
        let mut m = s.serialize_struct("SwOperation", 6)?;
        m.serialize_field("index", &self.index)?;
        m.serialize_field("offset", &self.offset)?;
        m.serialize_field("type", &self.kind())?;
        m.serialize_field("type_name", &self.type_name())?;
        m.serialize_field("name", &name)?;
        name_tail(&mut m, tail)?;
        m.end()
    }
}

/// A name's kept tail, in a document only when one of its bytes is non-zero.
pub(crate) fn name_tail<M: SerializeStruct>(m: &mut M, tail: &NameTail) -> Result<(), M::Error> {
    if tail.is_zero() {
        m.skip_field("name_trailing_bytes")
    } else {
        m.serialize_field("name_trailing_bytes", tail)
    }
}

/// One `nbg_section_hw_init_operation` record.
#[derive(Clone, Debug, PartialEq)]
pub struct HwInitOperation<F = Decoded> {
    /// Position in the hardware-init operation table.
    pub index: usize,
    /// File offset of the record.
    pub offset: u64,
    /// The record's values: what the accessors read and the re-encoding writes (a view of
    /// the bytes in check-only mode).
    pub fields: F,
}

impl<F: Fields> HwInitOperation<F> {
    accessors! { fh;
        /// Index into the ICD table (the init operation's state buffer).
        state_id: state_id -> u32;
        /// First patch record that applies to the operation.
        patch_index: patch_index -> u32;
        /// Number of patch records from `patch_index`.
        patch_count: patch_count -> u32;
    }
}

impl Serialize for HwInitOperation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("HwInitOperation", 5)?;
        m.serialize_field("index", &self.index)?;
        m.serialize_field("offset", &self.offset)?;
        m.serialize_field("state_id", &self.state_id())?;
        m.serialize_field("patch_index", &self.patch_index())?;
        m.serialize_field("patch_count", &self.patch_count())?;
        m.end()
    }
}

/// One `nbg_section_ppu_param` record: x, y, z of each group.
#[derive(Clone, Debug, PartialEq)]
pub struct PpuParam<F = Decoded> {
    /// Position in the PPU parameter table.
    pub index: usize,
    /// File offset of the record.
    pub offset: u64,
    /// The record's values: what the accessors read and the re-encoding writes (a view of
    /// the bytes in check-only mode).
    pub fields: F,
}

impl PpuParam {
    /// The x, y, z words of one group (`global_offset`, `global_scale`, `group_size`,
    /// `group_count`).
    pub fn xyz(&self, f: &fm::Field) -> [u32; 3] {
        let w = self.fields.words(f);
        [0, 1, 2].map(|i| w.get(i).copied().unwrap_or(0))
    }
}

impl Serialize for PpuParam {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("PpuParam", 6)?;
        m.serialize_field("index", &self.index)?;
        m.serialize_field("offset", &self.offset)?;
        for f in fpp::RECORD.fields {
            m.serialize_field(f.name, &self.xyz(f))?;
        }
        m.end()
    }
}

/// One `nbg_section_layer` record: a layer of the network and its operation count.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer<F = Decoded> {
    /// Position in the layer table.
    pub index: usize,
    /// File offset of the record.
    pub offset: u64,
    /// The record's values: what the accessors read and the re-encoding writes (a view of
    /// the bytes in check-only mode).
    pub fields: F,
    /// Operations whose `layer_id` names this layer (derived; may differ from the declared
    /// count, see the module note).
    pub named_operations: u64,
}

impl<F: Fields> Layer<F> {
    accessors! { fl;
        /// Public name `node_id`.
        id: id -> u32;
        /// The record's `uid` word (zero where the record is too short to hold it).
        uid: uid -> u32;
        /// As declared by the record.
        operation_count: operation_count -> u32;
    }
}

impl Layer {
    /// The layer's NUL-terminated name.
    pub fn name(&self) -> &str {
        text(&self.fields, &fl::name).0.unwrap_or_default()
    }
}

impl Serialize for Layer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Layer", 8)?;
        m.serialize_field("index", &self.index)?;
        m.serialize_field("offset", &self.offset)?;
        m.serialize_field("name", self.name())?;
        name_tail(&mut m, text(&self.fields, &fl::name).1)?;
        m.serialize_field("id", &self.id())?;
        m.serialize_field("uid", &self.uid())?;
        m.serialize_field("operation_count", &self.operation_count())?;
        m.serialize_field("named_operations", &self.named_operations)?;
        m.end()
    }
}

/// One `nbg_section_operation` record: an engine operation, its layer, state and patches.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation<F = Decoded> {
    /// Position in the operation table.
    pub index: usize,
    /// File offset of the record.
    pub offset: u64,
    /// The record's values: what the accessors read and the re-encoding writes (a view of
    /// the bytes in check-only mode).
    pub fields: F,
    /// Bytes of the load-state entry `state_id` names (derived; null for SW operations and
    /// where the state table is absent). nbinfo prints it as `Command Size`.
    pub command_bytes: Option<u32>,
    /// Bytes of the engine record `engine_index` names (derived): an NN-engine operation (NN,
    /// SP, NN_LUT, NT, as nbinfo's `nbg_operation_is_nn_engine` groups them) one NN command, TP
    /// one TP command, SH its PPU instruction entry; null for the others.
    pub instruction_bytes: Option<u32>,
    /// Bytes of the COEF_DATA_TABLE entry the operation's first patch of source type 5 names
    /// (derived, v2; the vendor reader's `Coeff data Size`: its `print_operation` reads such a
    /// patch's index into that table). Null where no patch of the operation has that source.
    pub coefficient_bytes: Option<u32>,
}

impl<F: Fields> Operation<F> {
    accessors! { fo;
        /// The record's `type` word (`_nbg_operation_type`).
        kind: kind -> u32;
        /// The record's own `index` word: position within its engine's records (NN/TP
        /// command, SH record); 0xffff for INIT.
        engine_index: index -> u32;
        /// The layer it belongs to (one of `NO_LAYER_IDS` for INIT and END).
        layer_id: layer_id -> u32;
        /// Index into the state table the operation loads (`Tables::state_table`).
        state_id: state_id -> u32;
        /// First patch record that applies to the operation.
        patch_index: patch_index -> u32;
        /// Number of patch records from `patch_index`.
        patch_count: patch_count -> u32;
        /// The word at +0x1c (32-byte records).
        abs_op_id: abs_op_id -> opt;
    }

    /// Public operation type name; `None` outside the enum.
    pub fn type_name(&self) -> Option<&'static str> {
        operation_type::name(self.kind())
    }
}

impl Operation {
    /// Bits 0..4 of the word at +0x18 (records of 28 bytes or more).
    pub fn preempt(&self) -> Option<u32> {
        self.fields.part(fo::preempt_word::preempt)
    }

    /// Bits 4..32 of the word at +0x18.
    pub fn abs_share_id(&self) -> Option<u32> {
        self.fields.part(fo::preempt_word::abs_share_id)
    }
}

impl Serialize for Operation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Operation", 16)?;
        m.serialize_field("index", &self.index)?;
        m.serialize_field("offset", &self.offset)?;
        m.serialize_field("type", &self.kind())?;
        m.serialize_field("type_name", &self.type_name())?;
        m.serialize_field("engine_index", &self.engine_index())?;
        m.serialize_field("layer_id", &self.layer_id())?;
        m.serialize_field("state_id", &self.state_id())?;
        m.serialize_field("patch_index", &self.patch_index())?;
        m.serialize_field("patch_count", &self.patch_count())?;
        m.serialize_field("preempt", &self.preempt())?;
        m.serialize_field("abs_share_id", &self.abs_share_id())?;
        m.serialize_field("abs_op_id", &self.abs_op_id())?;
        m.serialize_field("command_bytes", &self.command_bytes)?;
        m.serialize_field("instruction_bytes", &self.instruction_bytes)?;
        m.serialize_field("coefficient_bytes", &self.coefficient_bytes)?;
        m.end()
    }
}

/// One `nbg_section_sh_operation` record: a shader operation's instruction and PPU parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct ShOperation<F = Decoded> {
    /// Position in the SH operation table.
    pub index: usize,
    /// The record's values: what the accessors read and the re-encoding writes (a view of
    /// the bytes in check-only mode).
    pub fields: F,
}

impl<F: Fields> ShOperation<F> {
    accessors! { fs;
        /// Index into the PPU instruction table.
        instr_index: instr_index -> u32;
        /// Absent in 4-byte records (v1 before 0x0001000e).
        ppu_param_index: ppu_param_index -> opt;
    }
}

impl Serialize for ShOperation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("ShOperation", 3)?;
        m.serialize_field("index", &self.index)?;
        m.serialize_field("instr_index", &self.instr_index())?;
        m.serialize_field("ppu_param_index", &self.ppu_param_index())?;
        m.end()
    }
}

/// Patches are many (thousands per public graph): counted per source type, not listed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PatchSummary {
    /// Number of patch records.
    pub count: u64,
    /// Bytes per record (24, 28 or 40).
    pub record_size: u64,
    /// Public source-type name (or `unknown-N`) to record count.
    pub by_source_type: BTreeMap<String, u64>,
    /// Every record, decoded (kept for the round trip; the document lists only the summary).
    #[serde(skip)]
    pub records: Vec<Patch>,
}

/// One patch record (`nbg_section_patch_table`, or its 40-bit-VA form, whose first seven words
/// are the same fields).
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    /// The record's values: what the accessors read and the re-encoding writes.
    pub fields: Decoded,
}

impl Patch {
    accessors! { fp;
        /// The record's `type` word.
        kind: kind -> u32;
        /// Byte offset of the patched word inside its destination (low 32 bits).
        dest_offset: dest_offset -> u32;
        /// Where the patched address points (`nbg_source_type_e`).
        source_type: source_type -> u32;
        /// Byte offset added to the source's address (low 32 bits).
        src_offset: src_offset -> u32;
        /// The record's `transformed` word; meaning unknown, kept verbatim.
        transformed: transformed -> u32;
        /// Absent in 24-byte records (v1 before 0x00010006).
        name: name -> opt;
    }

    /// Which input or output the source is, for those source types (signed in the header).
    pub fn index(&self) -> i32 {
        self.fields.u32(&fp::index) as i32
    }
}

/// Patch records through the field map: the 28-byte public record (or its older 24-byte form)
/// or the 40-bit-VA 40-byte record, whose first seven words are the same fields.
fn decode_patches(p: Slice<'_>) -> Result<PatchSummary, Failure> {
    // Counted by number, named once per kind: a patch table has thousands of records.
    let mut by_kind: BTreeMap<u32, u64> = BTreeMap::new();
    let mut records = Vec::with_capacity(crate::nbg::read::index(p.count()));
    let layout = patch_layout(p.record_size, p.offset)?;
    for (i, offset, r) in p.records() {
        let v: Decoded = read(layout, r, offset, "patch", i)?;
        *by_kind.entry(v.u32(&fp::source_type)).or_insert(0) += 1;
        records.push(Patch { fields: v });
    }
    let mut by_source_type = BTreeMap::new();
    for (kind, n) in by_kind {
        let name =
            source_type::name(kind).map_or_else(|| format!("unknown-{kind}"), str::to_string);
        *by_source_type.entry(name).or_insert(0) += n;
    }
    Ok(PatchSummary {
        count: p.count(),
        record_size: p.record_size,
        by_source_type,
        records,
    })
}

/// The layout of patch records of `record_size` bytes (`holds`; the 40-byte layout's fields
/// are a superset), or `table-record-size` at `offset`.
fn patch_layout(record_size: u64, offset: u64) -> Result<crate::nbg::fieldmap::Record, Failure> {
    match crate::nbg::holds::v1("patch").and_then(|k| k.record(record_size)) {
        Some(layout) => Ok(layout),
        None => fail(
            Code::TableRecordSize,
            offset,
            format!("patch records of {record_size} bytes have no layout"),
        ),
    }
}

/// The record tables, each record read through `F`: decoded values, or a checked view.
struct Read<F> {
    layers: Vec<Layer<F>>,
    operations: Vec<Operation<F>>,
    sh_operations: Option<Vec<ShOperation<F>>>,
    sw_operations: Option<Vec<SwOperation<F>>>,
    hw_init_operations: Option<Vec<HwInitOperation<F>>>,
    ppu_params: Option<Vec<PpuParam<F>>>,
}

/// Decode and cross-check the records.
pub fn decode(t: &Tables<'_>) -> Result<Records, Failure> {
    let read = read_tables::<Decoded>(t)?;
    let per_layer = cross_check(t, &read)?;
    let Read {
        mut layers,
        mut operations,
        sh_operations,
        sw_operations,
        hw_init_operations,
        ppu_params,
    } = read;
    for o in &mut operations {
        if o.kind() != operation_type::SW {
            o.command_bytes = t.state_table.and_then(|s| s.size(o.state_id()));
        }
        o.instruction_bytes = match o.kind() {
            k if operation_type::is_nn_engine(k) => t.nn_command_bytes,
            operation_type::TP => t.tp_command_bytes,
            operation_type::SH => sh_operations
                .as_ref()
                .and_then(|sh| sh.get(o.engine_index() as usize))
                .and_then(|r| t.ppu_instr_table?.size(r.instr_index())),
            _ => None,
        };
    }
    for (l, &named) in layers.iter_mut().zip(&per_layer) {
        l.named_operations = named;
    }
    let patches = patches(t)?;
    // The vendor reader's `Coeff data Size`: its `print_operation` reads the COEF_DATA_TABLE
    // entry the operation's first MISC_DYNA_GENERIC patch names.
    if let (Some(p), Some(coef)) = (&patches, t.coef_table) {
        for o in &mut operations {
            let range = o.patch_index() as usize
                ..(o.patch_index() as usize).saturating_add(o.patch_count() as usize);
            o.coefficient_bytes = p
                .records
                .get(range)
                .into_iter()
                .flatten()
                .find(|r| {
                    r.source_type() == crate::nbg::format::records::source_type::MISC_DYNA_GENERIC
                })
                .and_then(|r| coef.size(r.index() as u32));
        }
    }
    Ok(Records {
        layers: t.layer.map(|_| layers),
        operations: t.operation.map(|_| operations),
        sh_operations,
        patches,
        sw_operations,
        hw_init_operations,
        ppu_params,
    })
}

/// The records decoded, or in check-only mode (`Options::fingerprints` off: a verdict, no
/// document) checked and not kept.
pub fn decode_with(t: &Tables<'_>, opts: super::Options) -> Result<Records, Failure> {
    if opts.fingerprints {
        decode(t)
    } else {
        check(t).map(|()| Records::default())
    }
}

/// `decode`'s checks in its order, keeping nothing: every record is checked through a view of
/// its bytes, no value is copied (check-only mode, which a sweep runs once per flip).
pub fn check(t: &Tables<'_>) -> Result<(), Failure> {
    let read = read_tables::<View<'_>>(t)?;
    cross_check(t, &read)?;
    patches(t).map(drop)
}

/// Every table's records read through `F`, table by table (layers, operations, SH, SW,
/// hardware-init, PPU parameters): sizes and names.
fn read_tables<'a, F: ReadFields<'a>>(t: &Tables<'a>) -> Result<Read<F>, Failure> {
    let empty = Slice {
        offset: 0,
        bytes: &[],
        record_size: 1,
    };
    let layers = table(
        t.layer.unwrap_or(empty),
        fl::RECORD,
        "layer",
        |index, offset, fields| Layer {
            index,
            offset,
            fields,
            named_operations: 0,
        },
    )?;
    let operations = table(
        t.operation.unwrap_or(empty),
        fo::RECORD,
        "operation",
        |index, offset, fields| Operation {
            index,
            offset,
            fields,
            command_bytes: None,
            instruction_bytes: None,
            coefficient_bytes: None,
        },
    )?;
    let sh_operations =
        t.sh.map(|s| {
            table(s, fs::RECORD, "SH operation", |index, _, fields| {
                ShOperation { index, fields }
            })
        })
        .transpose()?;
    let sw_operations =
        t.sw.map(|s| {
            table(s, fsw::RECORD, "SW operation", |index, offset, fields| {
                SwOperation {
                    index,
                    offset,
                    fields,
                }
            })
        })
        .transpose()?;
    let hw_init_operations = t
        .hw_init
        .map(|s| {
            table(
                s,
                fh::RECORD,
                "hw_init operation",
                |index, offset, fields| HwInitOperation {
                    index,
                    offset,
                    fields,
                },
            )
        })
        .transpose()?;
    let ppu_params = t
        .ppu_param
        .map(|s| {
            table(s, fpp::RECORD, "PPU parameter", |index, offset, fields| {
                PpuParam {
                    index,
                    offset,
                    fields,
                }
            })
        })
        .transpose()?;
    Ok(Read {
        layers,
        operations,
        sh_operations,
        sw_operations,
        hw_init_operations,
        ppu_params,
    })
}

/// The references between the tables, in the module note's order; the operations each layer
/// is named by.
fn cross_check<F: Fields>(t: &Tables<'_>, r: &Read<F>) -> Result<Vec<u64>, Failure> {
    let patch_count = t.patch.map(|p| p.count()).or(t.patch_unread.map(|u| u.2));
    let mut per_layer = vec![0u64; r.layers.len()];
    for o in &r.operations {
        let at = |field: usize| o.offset + field as u64;
        let unattached = matches!(o.kind(), operation_type::INIT | operation_type::END);
        if unattached && NO_LAYER_IDS.contains(&o.layer_id()) {
            // INIT and END belong to no layer.
        } else if let Some(n) = per_layer.get_mut(o.layer_id() as usize) {
            *n += 1;
        } else {
            return fail(
                Code::OperationLayerOutOfRange,
                at(fo::layer_id.offset),
                format!(
                    "operation {} names layer {} but the layer table holds {} records",
                    o.index,
                    o.layer_id(),
                    r.layers.len()
                ),
            );
        }
        if let Some((end, patches)) = patches_beyond(o.patch_index(), o.patch_count(), patch_count)
        {
            return fail(
                Code::OperationPatchOutOfRange,
                at(fo::patch_index.offset),
                format!(
                    "operation {} patches [{}, {end}) leave the {patches}-record patch table",
                    o.index,
                    o.patch_index()
                ),
            );
        }
        let engine = match o.kind() {
            k if operation_type::is_nn_engine(k) => t.nn_records.map(|n| ("NN", n)),
            operation_type::TP => t.tp_records.map(|n| ("TP", n)),
            operation_type::SH => t.sh.map(|s| ("SH", s.count())),
            operation_type::SW => t.sw.map(|s| ("SW", s.count())),
            _ => None,
        };
        if let Some((name, n)) = engine.filter(|&(_, n)| u64::from(o.engine_index()) >= n) {
            return fail(
                Code::OperationIndexOutOfRange,
                at(fo::index.offset),
                format!(
                    "{name} operation {} has index {} but the {name} table holds {n} records",
                    o.index,
                    o.engine_index()
                ),
            );
        }
        if let Some((label, n)) = t
            .state_table
            .filter(|_| !unattached)
            .map(|s| (s.label, s.entries()))
        {
            if u64::from(o.state_id()) >= n {
                return fail(
                    Code::OperationStateOutOfRange,
                    at(fo::state_id.offset),
                    format!(
                        "operation {} has state id {} but the {label} holds {n} entries",
                        o.index,
                        o.state_id()
                    ),
                );
            }
        }
    }
    if let (Some(sh), Some(s), Some((label, n))) = (
        &r.sh_operations,
        t.sh,
        t.ppu_instr_table.map(|p| (p.label, p.entries())),
    ) {
        if let Some(bad) = sh.iter().find(|r| u64::from(r.instr_index()) >= n) {
            return fail(
                Code::ShInstructionOutOfRange,
                s.offset + bad.index as u64 * s.record_size,
                format!(
                    "SH record {} names PPU instruction entry {} but the {} holds {n} entries",
                    bad.index,
                    bad.instr_index(),
                    label
                ),
            );
        }
    }
    if let (Some(sh), Some(s), true) = (&r.sh_operations, t.sh, t.ppu_params_referenced) {
        let n = t.ppu_param.map_or(0, |p| p.count());
        let bad = sh
            .iter()
            .find(|r| r.ppu_param_index().is_some_and(|i| u64::from(i) >= n));
        if let Some(bad) = bad {
            return fail(
                Code::ShPpuParamOutOfRange,
                s.offset + bad.index as u64 * s.record_size + fs::ppu_param_index.offset as u64,
                format!(
                    "SH record {} names PPU parameter {} but the ppu_param table holds {n} records",
                    bad.index,
                    bad.ppu_param_index().unwrap_or_default()
                ),
            );
        }
    }
    for h in r.hw_init_operations.iter().flatten() {
        if let Some((end, patches)) = patches_beyond(h.patch_index(), h.patch_count(), patch_count)
        {
            return fail(
                Code::HwInitPatchOutOfRange,
                h.offset + fh::patch_index.offset as u64,
                format!(
                    "hw_init operation {} patches [{}, {end}) leave the {patches}-record patch table",
                    h.index,
                    h.patch_index()
                ),
            );
        }
        if let Some(n) = t.icd_entries.filter(|&n| u64::from(h.state_id()) >= n) {
            return fail(
                Code::HwInitStateOutOfRange,
                h.offset + fh::state_id.offset as u64,
                format!(
                    "hw_init operation {} has state id {} but the icd table holds {n} entries",
                    h.index,
                    h.state_id()
                ),
            );
        }
    }
    Ok(per_layer)
}

/// The patch table: decoded where its records are read, its layout checked where only its
/// geometry is (check-only mode).
fn patches(t: &Tables<'_>) -> Result<Option<PatchSummary>, Failure> {
    match (t.patch, t.patch_unread) {
        (Some(p), _) => decode_patches(p).map(Some),
        (None, Some((offset, record_size, count))) => Ok(Some(PatchSummary {
            count,
            record_size: patch_layout(record_size, offset).map(|_| record_size)?,
            by_source_type: BTreeMap::new(),
            records: Vec::new(),
        })),
        (None, None) => Ok(None),
    }
}

/// Every record of `s` read through `F` as `record` (a table of `what`) and made a `T` by
/// `make` from its index, file offset and fields.
fn table<'a, F: ReadFields<'a>, T>(
    s: Slice<'a>,
    record: fm::Record,
    what: &str,
    make: impl Fn(usize, u64, F) -> T,
) -> Result<Vec<T>, Failure> {
    collect_records(
        s.records().map(|(index, offset, r)| {
            Ok(make(index, offset, read(record, r, offset, what, index)?))
        }),
    )
}

/// `r`, record `index` of a table of `what` at file offset `offset`, decoded as `record`
/// (`truncated` for a size the record has no layout of, `invalid-name` for a string field that
/// is not NUL-terminated strict UTF-8).
fn read<'a, F: ReadFields<'a>>(
    record: fm::Record,
    r: &'a [u8],
    offset: u64,
    what: &str,
    index: usize,
) -> Result<F, Failure> {
    F::read(record, r).or_else(|e| match e {
        Unreadable::Name(f) => fail(
            Code::InvalidName,
            offset + f.offset as u64,
            format!(
                "{what} {index} {} is not NUL-terminated strict UTF-8 within {} bytes",
                f.name, f.width
            ),
        ),
        Unreadable::Size => Err(super::truncated(&record, r, offset)),
    })
}

/// Whether the v1 parser decodes the records of table `name` for `version`: every version
/// whose layout is known (`format::v1::Layout::Known`) has its record layouts in the field map,
/// each field gated by the version it appears from (`Field::since`, evidence per version in
/// `format::v1::PROVED_VERSIONS`).
pub fn v1_decodes(name: &str, version: u32) -> bool {
    crate::nbg::format::v1::Layout::of(version) == crate::nbg::format::v1::Layout::Known
        && crate::nbg::holds::v1(name).is_some_and(|k| k.holds.graph_records())
}

/// `(end, table records)` when the patch range `[index, index + count)` of an operation or
/// hw-init record leaves a patch table of `patches` records; an empty range never does.
fn patches_beyond(index: u32, count: u32, patches: Option<u64>) -> Option<(u64, u64)> {
    let patches = patches.filter(|_| count > 0)?;
    let end = u64::from(index) + u64::from(count);
    (end > patches).then_some((end, patches))
}

/// Rows the text summary lists per table unless asked for all (`parse --all`); `--json` lists
/// every record.
pub const SUMMARY_ROWS: usize = 32;

impl Records {
    /// The layer and operation tables of the text summary, `rows` of each at most (each
    /// operation beside its layer's name).
    pub fn summary(&self, rows: usize) -> String {
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
            if n > rows {
                let _ = writeln!(s, "  ... {} more (--all or --json lists all)", n - rows);
            }
        };
        let _ = writeln!(s, "\nlayers ({}):", layers.len());
        let _ = writeln!(
            s,
            "  {:>4} {:<40} {:>6} {:>8} {:>4}",
            "#", "name", "id", "uid", "ops"
        );
        for l in layers.iter().take(rows) {
            let _ = writeln!(
                s,
                "  {:>4} {:<40} {:>6} {:>8} {:>4}",
                l.index,
                l.name(),
                l.id(),
                l.uid(),
                l.operation_count()
            );
        }
        more(&mut s, layers.len());
        let _ = writeln!(s, "\noperations ({}):", operations.len());
        let _ = writeln!(
            s,
            "  {:>4} {:<6} {:>6} {:>6} {:>6} {:>8}  layer name",
            "#", "type", "index", "layer", "state", "patches"
        );
        for o in operations.iter().take(rows) {
            let layer = layers.get(o.layer_id() as usize).map_or("-", |l| l.name());
            let _ = writeln!(
                s,
                "  {:>4} {:<6} {:>6} {:>6} {:>6} {:>8}  {layer}",
                o.index,
                o.type_name()
                    .map_or_else(|| o.kind().to_string(), str::to_string),
                o.engine_index(),
                o.layer_id(),
                o.state_id(),
                format!("{}+{}", o.patch_index(), o.patch_count())
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
