//! What each patch record relocates and what the address it writes points to: the field a
//! loader rewrites (a state value of a state buffer, a word of an NN or TP command, a word of a
//! coefficient buffer) and the memory it points into (an input or output, the memory pool, an
//! SRAM, an entry of the coefficient or ICD table, another command).
//!
//! Facts, each checked on the committed files (`notebooks/commands.md`, "Patches resolved"):
//! - Patch types (`type` word): 0 STATE (a state stream), 1 COMMAND (an NN/TP command),
//!   2 KERNEL (an NN coefficient buffer) — `nbg_patch_type_e` of VIPLite's public
//!   `nbg_format_util.h`; transformations 0 ORIGINAL, 1 RIGHT_SHIFT_6 (the field holds the
//!   address >> 6).
//! - Vivante's OpenVX serializer (flycat0101/gpu-viv6-andy at
//!   249e5c61cde55f9c36636241e53bb36b92631009, `gc_vx_binary.c`): a STATE patch's
//!   `dest_offset` is a byte offset into the state buffer its operation's `state_id` names; a
//!   COMMAND patch's is a byte offset into the operation's own NN or TP command, except for INIT,
//!   whose COMMAND patches point into its state buffer; SH operations have STATE patches only.
//!   A source of type COMMAND is the operation's own command (NN/TP: the command whose address
//!   the state `VIVS_PS_NN_INST_ADDR` / `VIVS_PS_TP_INST_ADDR` holds; SH: its instruction
//!   buffer); INPUT and OUTPUT index the graph's inputs and outputs; MISC_DYNA_* index the table
//!   of loading-config data (`lcd_table`), MEMORY_POOL, AXI_SRAM and VIP_SRAM carry an offset
//!   in that memory.
//! - Where a file has tables of its own for them (v2, v1 from 0x00010018), MISC_DYNA_GENERIC
//!   indexes the coefficient table (as the vendor reader's `print_operation` reads it) and
//!   MISC_DYNA_INPUT/OUTPUT the DYNAIO table: measured on every operation's patch of the v2
//!   controls, each such index is inside its table (390 and 122 patches).
//! - A hardware-init record's patches point into the ICD buffer its `state_id` names, and
//!   their MISC_DYNA_* and COMMAND sources index the ICD table (measured: every such index is an
//!   ICD entry, and the COMMAND source is the ICD entry whose NN or TP command the state stream
//!   starts).
//!
//! A patch whose target does not exist (an index past its table, an offset outside its buffer
//! or not on a state value) is reported unresolved with the reason, never guessed.

use crate::nbg::commands::{self, Command};
use crate::nbg::fieldmap::Record;
use crate::nbg::format::records::{operation_type as op, source_type as src};
use crate::nbg::parse::command_tables::{self, CommandStreams};
use crate::nbg::parse::records::{HwInitOperation, Operation, Patch, ShOperation};
use crate::nbg::read::Data;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Patch types (`nbg_patch_type_e`).
const PATCH_STATE: u32 = 0;
const PATCH_COMMAND: u32 = 1;
const PATCH_KERNEL: u32 = 2;

/// The state words that hold an NN or TP command's address.
const NN_INST_ADDR: u32 = 0x0428;
const TP_INST_ADDR: u32 = 0x042e;

/// Unresolved patches listed by `--json` and the summary, at most.
const LISTED: usize = 16;

/// Buffers an index table cuts out of one data region: the state buffers, the ICD.
pub struct Buffers<'a> {
    /// How names call the region (`NBG_SECTION_LOADSTATE`, `lcd`).
    pub label: &'static str,
    /// (offset, size) entries, region-relative.
    pub entries: &'a [[u64; 2]],
    /// The entries the parser decoded as command streams.
    pub streams: Option<&'a CommandStreams>,
}

impl Buffers<'_> {
    /// The commands of entry `e`; `None` when it was not decoded as a stream.
    fn commands(&self, e: u64) -> Option<&[Command]> {
        self.streams?.buffer(e)
    }
}

/// A command table: its name, layout and record count.
#[derive(Clone, Copy)]
pub struct CommandTable {
    /// `NBG_SECTION_NN`, `nn`.
    pub label: &'static str,
    /// The layout of its records.
    pub record: Record,
    /// Records it holds.
    pub count: usize,
}

/// An (offset, size) table other records index by number.
#[derive(Clone)]
pub struct Indexed<'a> {
    /// `NBG_SECTION_COEF_DATA`, `lcd`.
    pub label: &'static str,
    /// Its entries.
    pub entries: Cow<'a, [[u64; 2]]>,
}

/// Everything a graph says that patches refer to.
pub struct Context<'a> {
    /// The patch records.
    pub patches: &'a [Patch],
    /// The operations.
    pub operations: &'a [Operation],
    /// The hardware-init operations.
    pub hw_init: &'a [HwInitOperation],
    /// The SH operation records (an SH operation's instruction entry).
    pub sh: &'a [ShOperation],
    /// The state buffers operations' `state_id` index.
    pub states: Buffers<'a>,
    /// The ICD buffers hardware-init records and their patches index.
    pub icd: Buffers<'a>,
    /// What MISC_DYNA_GENERIC sources index (v2 COEF_DATA_TABLE into COEF_DATA; v1
    /// `coeff_data_table`, or `lcd_table` before it).
    pub dynamic: Option<Indexed<'a>>,
    /// What MISC_DYNA_INPUT and MISC_DYNA_OUTPUT sources index (the DYNAIO table; v1 `lcd_table`
    /// before it).
    pub dynamic_io: Option<Indexed<'a>>,
    /// What KERNEL_BITSTREAM sources index (v2 COEF_HEADER_TABLE into COEF_HEADER; none in v1).
    pub kernel_bitstreams: Option<Indexed<'a>>,
    /// The SH instruction buffers (v2 PPU_INSTR_TABLE, v1 `ppu_instr_table`).
    pub instructions: Option<Indexed<'a>>,
    /// The NN commands.
    pub nn: Option<CommandTable>,
    /// The TP commands.
    pub tp: Option<CommandTable>,
    /// Graph inputs.
    pub inputs: usize,
    /// Graph outputs.
    pub outputs: usize,
}

impl<'a> Context<'a> {
    /// The part both families read the same way: the patch, operation, hardware-init and SH
    /// records of `records`, with the state and ICD buffers; no tables, inputs or outputs yet
    /// (the family adds its own). `None` without a decoded patch table.
    pub fn of(
        records: &'a crate::nbg::parse::records::Records,
        states: Buffers<'a>,
        icd: Buffers<'a>,
    ) -> Option<Self> {
        Some(Context {
            patches: &records.patches.as_ref()?.records,
            operations: records.operations.as_deref().unwrap_or(&[]),
            hw_init: records.hw_init_operations.as_deref().unwrap_or(&[]),
            sh: records.sh_operations.as_deref().unwrap_or(&[]),
            states,
            icd,
            dynamic: None,
            kernel_bitstreams: None,
            dynamic_io: None,
            instructions: None,
            nn: None,
            tp: None,
            inputs: 0,
            outputs: 0,
        })
    }
}

/// One patch, resolved.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    /// Position in the patch table.
    pub patch: usize,
    /// The record it belongs to (`operation[3] NN`, `hw_init[1]`), `None` when no record's
    /// patch range holds it.
    pub owner: Option<String>,
    /// The public name of its type (`STATE`, `COMMAND`, `KERNEL`, or `unknown-N`).
    pub kind: String,
    /// The field it relocates (`NBG_SECTION_NN[2].word5.kernel_address`).
    pub field: Result<String, &'static str>,
    /// Where the address points (`NBG_SECTION_COEF_DATA[4]`, `input[0]`, `MEMORY_POOL+0x100`).
    pub source: Result<String, &'static str>,
    /// How the address is stored (`ORIGINAL`, `RIGHT_SHIFT_6`, `unknown-N`).
    pub transformation: String,
    /// Field name without record and entry numbers, for the summary (`NN.word5.kernel_address`).
    #[serde(skip)]
    generic: Option<String>,
}

impl Target {
    /// Whether both the field and the source were found.
    pub fn resolved(&self) -> bool {
        self.owner.is_some() && self.field.is_ok() && self.source.is_ok()
    }
}

/// Every patch of a graph, resolved, with the counts `nbg info` and `nbg patches` print.
#[derive(Clone, Debug, Serialize)]
pub struct PatchTargets {
    /// Patch records.
    pub patches: u64,
    /// Of them, with both the field and the source found.
    pub resolved: u64,
    /// Of them, all-zero records no record's patch range holds: unused slots (the v1 tables of
    /// the KSNN and Ameba toolkits end in thousands), neither resolved nor unresolved.
    pub unused: u64,
    /// Patches per relocated field, entry numbers left out.
    pub by_field: BTreeMap<String, u64>,
    /// The first unresolved patches.
    pub unresolved: Vec<Target>,
    /// Every patch (listed by `nbg patches --json`).
    pub targets: Vec<Target>,
}

/// Resolve every patch of `cx`.
pub fn resolve(cx: &Context<'_>) -> PatchTargets {
    let owner = owners(cx);
    let mut out = PatchTargets {
        patches: cx.patches.len() as u64,
        resolved: 0,
        unused: 0,
        by_field: BTreeMap::new(),
        unresolved: Vec::new(),
        targets: Vec::with_capacity(cx.patches.len()),
    };
    for (i, p) in cx.patches.iter().enumerate() {
        let t = target(cx, i, p, owner[i]);
        if owner[i].is_none() && is_zero(p) {
            out.unused += 1;
        } else if t.resolved() {
            out.resolved += 1;
            if let Some(g) = &t.generic {
                *out.by_field.entry(g.clone()).or_insert(0) += 1;
            }
        } else if out.unresolved.len() < LISTED {
            out.unresolved.push(t.clone());
        }
        out.targets.push(t);
    }
    out
}

/// Which record's patch range holds each patch (the first that does).
fn owners(cx: &Context<'_>) -> Vec<Option<Owner>> {
    let mut owner: Vec<Option<Owner>> = vec![None; cx.patches.len()];
    let mut claim = |first: u32, count: u32, o: Owner| {
        let first = first as usize;
        let end = first.saturating_add(count as usize).min(owner.len());
        for slot in owner.iter_mut().take(end).skip(first) {
            slot.get_or_insert(o);
        }
    };
    for (i, o) in cx.operations.iter().enumerate() {
        claim(o.patch_index(), o.patch_count(), Owner::Operation(i));
    }
    for (i, h) in cx.hw_init.iter().enumerate() {
        claim(h.patch_index(), h.patch_count(), Owner::HwInit(i));
    }
    owner
}

/// Whether every word of the record is zero.
fn is_zero(p: &Patch) -> bool {
    p.fields.is_zero()
}

#[derive(Clone, Copy, Debug)]
enum Owner {
    Operation(usize),
    HwInit(usize),
}

fn type_name(kind: u32) -> String {
    match kind {
        PATCH_STATE => "STATE".into(),
        PATCH_COMMAND => "COMMAND".into(),
        PATCH_KERNEL => "KERNEL".into(),
        k => format!("unknown-{k}"),
    }
}

fn transformation_name(t: u32) -> String {
    match t {
        0 => "ORIGINAL".into(),
        1 => "RIGHT_SHIFT_6".into(),
        k => format!("unknown-{k}"),
    }
}

fn target(cx: &Context<'_>, i: usize, p: &Patch, owner: Option<Owner>) -> Target {
    let mut t = Target {
        patch: i,
        owner: None,
        kind: type_name(p.kind()),
        field: Err("no operation or hardware-init record's patch range holds it"),
        source: Err("no operation or hardware-init record's patch range holds it"),
        transformation: transformation_name(p.transformed()),
        generic: None,
    };
    let Some(owner) = owner else {
        // The source does not depend on the owner, except a COMMAND source.
        if p.source_type() != src::COMMAND {
            t.source = common_source(cx, p.source_type(), p);
        }
        return t;
    };
    match owner {
        Owner::Operation(k) => {
            let o = &cx.operations[k];
            t.owner = Some(format!(
                "operation[{k}] {}",
                o.type_name()
                    .map_or_else(|| format!("type {}", o.kind()), str::to_string)
            ));
            let field = operation_field(cx, o, p);
            t.generic = field.as_ref().ok().map(|(_, g)| g.clone());
            t.field = field.map(|(f, _)| f);
            t.source = operation_source(cx, o, p);
        }
        Owner::HwInit(k) => {
            let h = &cx.hw_init[k];
            t.owner = Some(format!("hw_init[{k}]"));
            let field = hw_init_field(cx, h, p);
            t.generic = field.as_ref().ok().map(|(_, g)| g.clone());
            t.field = field.map(|(f, _)| f);
            t.source = hw_init_source(cx, p);
        }
    }
    t
}

/// `(name, generic name)` of a relocated field.
type Named = Result<(String, String), &'static str>;

/// The ICD entry of commands a hardware-init stream starts and their layout: the entry its
/// STATE patches of source COMMAND point at from `VIVS_PS_NN_INST_ADDR` or
/// `VIVS_PS_TP_INST_ADDR`. Several such patches into one entry address consecutive commands:
/// their layout is the one whose size is the step between the addresses (128 bytes on the
/// VIP8000-class serializer controls); a single one, the layout of the entry's size.
fn init_commands(cx: &Context<'_>, h: &HwInitOperation) -> Result<(u64, Record), &'static str> {
    let first = h.patch_index() as usize;
    let end = first
        .saturating_add(h.patch_count() as usize)
        .min(cx.patches.len());
    let entry = u64::from(h.state_id());
    let mut starts: Vec<(u64, u32, u32)> = Vec::new();
    for q in &cx.patches[first.min(end)..end] {
        if q.kind() != PATCH_STATE || q.source_type() != src::COMMAND {
            continue;
        }
        let (Ok(e), Some((address, value))) = (
            u64::try_from(q.index()),
            state_value(&cx.icd, entry, q.dest_offset()),
        ) else {
            continue;
        };
        if address == NN_INST_ADDR || address == TP_INST_ADDR {
            starts.push((e, address, value));
        }
    }
    let Some(&(e, address, value)) = starts.first() else {
        return Err("no state patch of its record starts an NN or TP command in the ICD");
    };
    if starts.iter().any(|&(f, a, _)| f != e || a != address) {
        return Err("its stream starts commands in several ICD entries or engines");
    }
    let layouts: &[Record] = if address == NN_INST_ADDR {
        &crate::nbg::fieldmap::NN_LAYOUTS
    } else {
        &crate::nbg::fieldmap::TP_LAYOUTS
    };
    let size = match starts.get(1) {
        Some(&(_, _, next)) => u64::from((next & !0x3f).wrapping_sub(value & !0x3f)),
        None => cx
            .icd
            .entries
            .get(crate::nbg::read::index(e))
            .map_or(0, |&[_, size]| size),
    };
    layouts
        .iter()
        .find(|r| r.size as u64 == size)
        .map(|&r| (e, r))
        .ok_or("the ICD commands' spacing matches no command layout")
}

/// The state word address and value of buffer `entry` of `b` at byte `dest`.
fn state_value(b: &Buffers<'_>, entry: u64, dest: u32) -> Option<(u32, u32)> {
    let list = b.commands(entry)?;
    let dest = u64::from(dest);
    let c = list.iter().find(|c| {
        c.opcode == commands::LOAD_STATE
            && dest >= c.at + 4
            && dest < c.at + 4 + 4 * c.values.len() as u64
    })?;
    let k = (dest - c.at - 4) / 4;
    let value = *c.values.get(crate::nbg::read::index(k))?;
    (dest % 4 == 0).then(|| (c.address + u32::try_from(k).unwrap_or(u32::MAX), value))
}

/// A state value of buffer `entry` of `b` at byte `dest`.
fn state_field(b: &Buffers<'_>, entry: u64, dest: u32) -> Named {
    if entry >= b.entries.len() as u64 {
        return Err("its record's state id names no state buffer");
    }
    let Some(list) = b.commands(entry) else {
        return Err("its state buffer does not decode as a command stream");
    };
    let dest = u64::from(dest);
    for (k, c) in list.iter().enumerate() {
        if c.opcode != commands::LOAD_STATE || dest < c.at + 4 || dest >= c.at + c.len() {
            continue;
        }
        let rel = dest - c.at;
        if rel % 4 != 0 || rel / 4 > c.values.len() as u64 {
            return Err("dest_offset is not on a state value");
        }
        let name = c.field_name(rel);
        return Ok((
            format!("{}[{entry}].command[{k}].{name}", b.label),
            format!("{}.{name}", b.label),
        ));
    }
    Err("dest_offset is not on a LOAD_STATE value of its state buffer")
}

/// The word of command record `entry` of `table` at byte `dest`, named by its field and, for a
/// word of bit fields, its widest part (the address part of an address word).
fn command_field(table: Option<CommandTable>, entry: u64, dest: u32) -> Named {
    let Some(t) = table else {
        return Err("the graph has no decoded command table of this engine");
    };
    if entry >= t.count as u64 {
        return Err("its operation's index names no command record");
    }
    let dest = u64::from(dest);
    if dest % 4 != 0 || dest + 4 > t.record.size as u64 {
        return Err("dest_offset is not a word of the command record");
    }
    let Some(f) = t.record.field_at(dest) else {
        return Err("dest_offset is not a word of the command record");
    };
    let name = match f
        .parts
        .iter()
        .max_by_key(|p| (p.bits, std::cmp::Reverse(p.shift)))
    {
        Some(p) => format!("{}.{}", f.name, p.name),
        None => f.name.to_string(),
    };
    let generic = t.label.trim_start_matches("NBG_SECTION_").to_uppercase();
    Ok((
        format!("{}[{entry}].{name}", t.label),
        format!("{generic}.{name}"),
    ))
}

/// The engine table an operation's own command is in.
fn engine(cx: &Context<'_>, kind: u32) -> Option<Option<CommandTable>> {
    if op::is_nn_engine(kind) {
        Some(cx.nn)
    } else if kind == op::TP {
        Some(cx.tp)
    } else {
        None
    }
}

fn operation_field(cx: &Context<'_>, o: &Operation, p: &Patch) -> Named {
    let state = || state_field(&cx.states, u64::from(o.state_id()), p.dest_offset());
    match (p.kind(), o.kind()) {
        (PATCH_STATE, _) | (PATCH_COMMAND, op::INIT) => state(),
        (PATCH_COMMAND, k) => match engine(cx, k) {
            Some(table) => command_field(table, u64::from(o.engine_index()), p.dest_offset()),
            None => Err("a COMMAND patch of an operation without NN or TP command"),
        },
        (PATCH_KERNEL, k) if op::is_nn_engine(k) => {
            let d = cx
                .dynamic
                .as_ref()
                .ok_or("the graph has no coefficient table")?;
            let Some(e) = coefficient_entry(cx, o) else {
                return Err(
                    "its operation has no MISC_DYNA_GENERIC patch naming a coefficient buffer",
                );
            };
            let [_, size] = d.entries[e];
            if u64::from(p.dest_offset()) + 4 > size {
                return Err("dest_offset is outside the coefficient buffer");
            }
            Ok((
                format!("{}[{e}]+0x{:x}", d.label, p.dest_offset()),
                format!("{}+0x{:x}", d.label, p.dest_offset()),
            ))
        }
        _ => Err("a patch type this operation type does not carry"),
    }
}

/// What a graph of either family gives the coefficient reader (`nbg::coefficients`): its NN
/// commands, the entries of the table MISC_DYNA_GENERIC patches index (v2 COEF_DATA; v1
/// `coeff_data`, or `lcd` before it) with their roles, its records and patches.
pub struct CoefficientView<'g> {
    /// The file.
    pub bytes: &'g [u8],
    /// The target word (the NPU's PID), which names the part's coefficient features.
    pub target: u32,
    /// The NN commands.
    pub commands: &'g [crate::nbg::parse::command_tables::NnCommand],
    /// The TP commands.
    pub tp: &'g [crate::nbg::parse::command_tables::TpCommand],
    /// The entries patches name, with what they hold.
    pub regions: &'g [Region],
    /// Operations and layers.
    pub records: &'g crate::nbg::parse::records::Records,
    /// The patches and what they index, when decoded.
    pub context: Option<Context<'g>>,
}

/// (operation, coefficient-table entry) of every MISC_DYNA_GENERIC patch in an operation's
/// range: which operations read each entry, whatever they read it as (a shader's weights and
/// biases among them).
pub fn entry_readers(cx: &Context<'_>) -> Vec<(usize, usize)> {
    entry_patches(cx)
        .filter_map(|(k, p)| Some((k, usize::try_from(p.index()).ok()?)))
        .collect()
}

/// (operation position, patch) of every MISC_DYNA_GENERIC patch in an operation's range.
fn entry_patches<'c>(cx: &'c Context<'_>) -> impl Iterator<Item = (usize, &'c Patch)> {
    cx.patches
        .iter()
        .zip(owners(cx))
        .filter_map(|(p, owner)| match owner {
            Some(Owner::Operation(k)) if p.source_type() == src::MISC_DYNA_GENERIC => Some((k, p)),
            _ => None,
        })
}

/// The byte of a TP command its lookup-table (or fully-connected kernel) address is patched
/// into: word 11, `alu_load_pwl_lut_address` (Mesa's `etna_tp_params`).
const TP_LUT_WORD: u32 = 44;

/// A coefficient-table entry a TP command reads through `alu_load_pwl_lut_address`: the
/// command, the entry and the patch's `src_offset`, where the command's part of the entry
/// starts (the vendor's TP fully-connected commands each point at their own part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TpRead {
    /// The TP command's position in its table.
    pub command: usize,
    /// The operation that runs it.
    pub operation: usize,
    /// The coefficient-table entry.
    pub entry: usize,
    /// Byte offset of the command's part in the entry.
    pub src_offset: u64,
}

/// Every COMMAND patch of a TP operation that writes a coefficient-table entry's address into
/// its command's `alu_load_pwl_lut_address`.
pub fn tp_reads(cx: &Context<'_>) -> Vec<TpRead> {
    coefficient_patches(cx)
        .filter_map(|(k, p)| {
            let o = &cx.operations[k];
            (o.kind() == op::TP && p.kind() == PATCH_COMMAND && p.dest_offset() == TP_LUT_WORD)
                .then_some(TpRead {
                    command: o.engine_index() as usize,
                    operation: k,
                    entry: usize::try_from(p.index()).ok()?,
                    src_offset: u64::from(p.src_offset()),
                })
        })
        .collect()
}

/// (operation position, patch) of every patch in an operation's range whose source indexes
/// the coefficient table: MISC_DYNA_GENERIC, and where one table serves both (v1 before
/// 0x00010018: `lcd`), MISC_DYNA_INPUT and MISC_DYNA_OUTPUT too.
fn coefficient_patches<'c>(cx: &'c Context<'_>) -> impl Iterator<Item = (usize, &'c Patch)> {
    let shared = match (&cx.dynamic, &cx.dynamic_io) {
        (Some(a), Some(b)) => a.label == b.label,
        _ => false,
    };
    cx.patches
        .iter()
        .zip(owners(cx))
        .filter_map(move |(p, owner)| match owner {
            Some(Owner::Operation(k))
                if p.source_type() == src::MISC_DYNA_GENERIC
                    || (shared && is_dynamic(p.source_type())) =>
            {
                Some((k, p))
            }
            _ => None,
        })
}

/// The first HALTI5 uniform's state word address (Mesa's rules-ng `state.xml`:
/// `VIVS_SH_HALTI5_UNIFORMS`, byte 0x36000, 1024 words).
const UNIFORMS: u32 = 0xd800;
const UNIFORM_WORDS: u32 = 1024;

/// A coefficient-table entry an operation reads through a shader uniform: the operation, the
/// entry, the uniform its address is patched into, and the eight uniform words from there on
/// as the operation's state buffer leaves them (`None` for a word it does not write).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UniformRead {
    /// The operation's position in the operation table.
    pub operation: usize,
    /// The coefficient-table entry.
    pub entry: usize,
    /// The uniform (`VIVS_SH_HALTI5_UNIFORMS[uniform]`) the entry's address goes to.
    pub uniform: u32,
    /// Uniforms `uniform` to `uniform + 7`.
    pub words: [Option<u32>; 8],
}

/// Every STATE patch of an operation that writes a coefficient-table entry's address into a
/// HALTI5 uniform, with the uniform words that follow it (a shader's view of the entry).
pub fn uniform_reads(cx: &Context<'_>) -> Vec<UniformRead> {
    coefficient_patches(cx)
        .filter(|(_, p)| p.kind() == PATCH_STATE)
        .filter_map(|(k, p)| {
            let state = cx.operations[k].state_id();
            let (address, _) = state_value(&cx.states, u64::from(state), p.dest_offset())?;
            let uniform = address
                .checked_sub(UNIFORMS)
                .filter(|&u| u < UNIFORM_WORDS)?;
            Some(UniformRead {
                operation: k,
                entry: usize::try_from(p.index()).ok()?,
                uniform,
                words: last_values(&cx.states, u64::from(state), address),
            })
        })
        .collect()
}

/// The value each of the eight state words from `address` on holds at the end of buffer
/// `entry` of `b` (the last write wins, as the hardware sees it when the shader runs).
fn last_values(b: &Buffers<'_>, entry: u64, address: u32) -> [Option<u32>; 8] {
    let mut out = [None; 8];
    for c in b.commands(entry).unwrap_or(&[]) {
        if c.opcode != commands::LOAD_STATE {
            continue;
        }
        for (slot, a) in out.iter_mut().zip(address..) {
            let Some(k) = a.checked_sub(c.address) else {
                continue;
            };
            if let Some(&v) = c.values.get(k as usize) {
                *slot = Some(v);
            }
        }
    }
    out
}

/// (NN command, coefficient-table entry) of every patch an NN operation's `kernel_address`
/// takes from a MISC_DYNA_GENERIC source: which buffer each NN command reads its kernels from
/// (`Role::Coefficients`, the rule `roles` names entries by).
pub fn kernel_entries(cx: &Context<'_>) -> Vec<(usize, usize)> {
    entry_patches(cx)
        .filter_map(|(k, p)| {
            let o = &cx.operations[k];
            let kernel = op::is_nn_engine(o.kind())
                && dest_role(cx, Owner::Operation(k), p) == Role::Coefficients;
            kernel.then(|| Some((o.engine_index() as usize, usize::try_from(p.index()).ok()?)))?
        })
        .collect()
}

/// The coefficient entry of an operation: the index of its first MISC_DYNA_GENERIC patch that
/// names an entry of the table (the vendor reader's `Coeff data` rule).
fn coefficient_entry(cx: &Context<'_>, o: &Operation) -> Option<usize> {
    let d = cx.dynamic.as_ref()?;
    let first = o.patch_index() as usize;
    let end = first
        .saturating_add(o.patch_count() as usize)
        .min(cx.patches.len());
    cx.patches.get(first..end)?.iter().find_map(|p| {
        let e = usize::try_from(p.index()).ok()?;
        (p.source_type() == src::MISC_DYNA_GENERIC && e < d.entries.len()).then_some(e)
    })
}

fn operation_source(cx: &Context<'_>, o: &Operation, p: &Patch) -> Result<String, &'static str> {
    match p.source_type() {
        src::COMMAND => {
            if let Some(table) = engine(cx, o.kind()) {
                let t = table.ok_or("the graph has no decoded command table of this engine")?;
                if u64::from(o.engine_index()) >= t.count as u64 {
                    return Err("its operation's index names no command record");
                }
                return Ok(format!("{}[{}]", t.label, o.engine_index()));
            }
            if o.kind() == op::SH {
                let sh = cx
                    .sh
                    .get(o.engine_index() as usize)
                    .ok_or("its operation's index names no SH record")?;
                let t = cx
                    .instructions
                    .as_ref()
                    .ok_or("the graph has no instruction table")?;
                if sh.instr_index() as usize >= t.entries.len() {
                    return Err("its SH record names no instruction buffer");
                }
                return Ok(format!("{}[{}]", t.label, sh.instr_index()));
            }
            Err("a COMMAND source of an operation without a command")
        }
        s => common_source(cx, s, p),
    }
}

fn hw_init_field(cx: &Context<'_>, h: &HwInitOperation, p: &Patch) -> Named {
    let entry = u64::from(h.state_id());
    match p.kind() {
        PATCH_STATE => state_field(&cx.icd, entry, p.dest_offset()),
        PATCH_COMMAND => {
            let (e, record) = init_commands(cx, h)?;
            let &[_, size] = cx
                .icd
                .entries
                .get(crate::nbg::read::index(e))
                .ok_or("its command index names no ICD entry")?;
            let dest = u64::from(p.dest_offset());
            let len = record.size as u64;
            if dest % 4 != 0 || dest + 4 > size {
                return Err("dest_offset is not a word of the ICD commands");
            }
            let engine = if record.id.starts_with("nn") {
                "nn"
            } else {
                "tp"
            };
            let one = CommandTable {
                label: "",
                record,
                count: 1,
            };
            let at = u32::try_from(dest % len).map_err(|_| "the destination is beyond 4 GiB")?;
            let (_, field) = command_field(Some(one), 0, at)?;
            let field = field.trim_start_matches('.');
            Ok((
                format!("{}[{e}].{engine}[{}].{field}", cx.icd.label, dest / len),
                format!("{}.{}.{field}", cx.icd.label, engine.to_uppercase()),
            ))
        }
        _ => Err("a patch type hardware-init records do not carry"),
    }
}

fn hw_init_source(cx: &Context<'_>, p: &Patch) -> Result<String, &'static str> {
    match p.source_type() {
        s if s == src::COMMAND || is_dynamic(s) => indexed(
            &Indexed {
                label: cx.icd.label,
                entries: Cow::Borrowed(cx.icd.entries),
            },
            p.index(),
        ),
        s => common_source(cx, s, p),
    }
}

fn is_dynamic(s: u32) -> bool {
    matches!(
        s,
        src::MISC_DYNA_GENERIC | src::MISC_DYNA_INPUT | src::MISC_DYNA_OUTPUT
    )
}

fn indexed(t: &Indexed<'_>, index: i32) -> Result<String, &'static str> {
    match usize::try_from(index) {
        Ok(e) if e < t.entries.len() => Ok(format!("{}[{e}]", t.label)),
        _ => Err("its index names no entry of the table it indexes"),
    }
}

fn common_source(cx: &Context<'_>, s: u32, p: &Patch) -> Result<String, &'static str> {
    let io = |what: &str, count: usize| match usize::try_from(p.index()) {
        Ok(i) if i < count => Ok(format!("{what}[{i}]+0x{:x}", p.src_offset())),
        _ => Err("its index names no graph input or output"),
    };
    let table = |t: &Option<Indexed<'_>>| {
        indexed(
            t.as_ref()
                .ok_or("the graph has no table this source type indexes")?,
            p.index(),
        )
    };
    match s {
        src::MISC_DYNA_GENERIC => table(&cx.dynamic),
        src::MISC_DYNA_INPUT | src::MISC_DYNA_OUTPUT => table(&cx.dynamic_io),
        src::KERNEL_BITSTREAM => table(&cx.kernel_bitstreams),
        src::INPUT => io("input", cx.inputs),
        src::OUTPUT => io("output", cx.outputs),
        src::MEMORY_POOL | src::AXI_SRAM | src::VIP_SRAM => Ok(format!(
            "{}+0x{:x}",
            src::name(s).unwrap_or("?"),
            p.src_offset()
        )),
        _ => Err("a source type whose index has no public meaning"),
    }
}

/// What an entry of a table of buffers holds, as the records and patched fields that point at
/// it say (`roles`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// A state buffer an operation or hardware-init record names by its state id.
    StateStream,
    /// NN commands: a command-address state (`VIVS_PS_NN_INST_ADDR`) points at it.
    NnCommands,
    /// TP commands (`VIVS_PS_TP_INST_ADDR`).
    TpCommands,
    /// An NN kernel's coefficient stream (`kernel_address`).
    Coefficients,
    /// A TP lookup table (`alu_load_pwl_lut_address`) of the serializer's size
    /// (`TP_LUT_BUFF_SIZE`, 4104 bytes).
    LookupTable,
    /// Another buffer `alu_load_pwl_lut_address` names: of another size, so not a lookup
    /// table as the serializer writes one (lenet's fully connected layers on TP, for example).
    TpBuffer,
    /// Shader instructions (an SH record's instruction entry, `VIVS_PS_INST_ADDR`).
    Instructions,
    /// An image an NN or TP command reads or writes (its input or output address).
    Image,
    /// Data another patched field points at (shader uniforms, temporaries).
    Data,
    /// No record or patch points at it.
    Unreferenced,
}

impl Role {
    /// Whether the entry holds data an operation reads or writes, not commands, code or a
    /// lookup table.
    fn is_data(self) -> bool {
        matches!(
            self,
            Role::Image | Role::Data | Role::TpBuffer | Role::Coefficients | Role::Unreferenced
        )
    }

    /// The name the ledger's labels use.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::StateStream => "state stream",
            Role::NnCommands => "NN commands",
            Role::TpCommands => "TP commands",
            Role::Coefficients => "coefficients",
            Role::LookupTable => "lookup table",
            Role::TpBuffer => "TP buffer",
            Role::Instructions => "shader instructions",
            Role::Image => "image",
            Role::Data => "data",
            Role::Unreferenced => "unreferenced",
        }
    }
}

/// The state word address of a shader's instructions (Mesa's rules-ng `state_3d.xml`:
/// `VIVS_PS_INST_ADDR`, byte 0x01028).
const PS_INST_ADDR: u32 = 0x040a;

/// The role of each of the `count` entries of the table called `label` (the context's state
/// buffers, ICD, coefficient, DYNAIO or instruction table), and the command layout of an entry
/// of NN or TP commands where one is known. The first role found for an entry holds.
pub fn roles(cx: &Context<'_>, label: &str, count: usize) -> Vec<(Role, Option<Record>)> {
    let mut out = vec![(Role::Unreferenced, None); count];
    let mut set = |e: u64, role: Role, record: Option<Record>| {
        if let Some(slot) = usize::try_from(e).ok().and_then(|e| out.get_mut(e)) {
            if slot.0 == Role::Unreferenced {
                *slot = (role, record);
            }
        }
    };
    if cx.states.label == label {
        for o in cx.operations.iter().filter(|o| o.kind() != op::SW) {
            set(u64::from(o.state_id()), Role::StateStream, None);
        }
    }
    if cx.icd.label == label {
        for h in cx.hw_init {
            set(u64::from(h.state_id()), Role::StateStream, None);
            if let Ok((e, record)) = init_commands(cx, h) {
                set(e, engine_role(record), Some(record));
            }
        }
    }
    if cx.instructions.as_ref().is_some_and(|t| t.label == label) {
        for o in cx.operations.iter().filter(|o| o.kind() == op::SH) {
            if let Some(sh) = cx.sh.get(o.engine_index() as usize) {
                set(u64::from(sh.instr_index()), Role::Instructions, None);
            }
        }
    }
    for (p, owner) in cx.patches.iter().zip(owners(cx)) {
        let Some(owner) = owner else { continue };
        let table = match owner {
            Owner::Operation(_) => match p.source_type() {
                src::MISC_DYNA_GENERIC => cx.dynamic.as_ref().map(|t| t.label),
                src::MISC_DYNA_INPUT | src::MISC_DYNA_OUTPUT => {
                    cx.dynamic_io.as_ref().map(|t| t.label)
                }
                _ => None,
            },
            Owner::HwInit(_) => (p.source_type() == src::COMMAND || is_dynamic(p.source_type()))
                .then_some(cx.icd.label),
        };
        let Ok(e) = u64::try_from(p.index()) else {
            continue;
        };
        if table == Some(label) {
            set(e, dest_role(cx, owner, p), None);
        }
    }
    out
}

fn engine_role(record: Record) -> Role {
    if crate::nbg::fieldmap::NN_LAYOUTS.contains(&record) {
        Role::NnCommands
    } else {
        Role::TpCommands
    }
}

/// What the field a patch relocates says its source holds.
fn dest_role(cx: &Context<'_>, owner: Owner, p: &Patch) -> Role {
    let by_word = |nn: bool, rel: u64| match (nn, rel) {
        (true, 20) => Role::Coefficients,
        (true, 24 | 28) | (false, 40 | 52) => Role::Image,
        (false, 44) => Role::LookupTable,
        _ => Role::Data,
    };
    let dest = u64::from(p.dest_offset());
    let state = |buffers: &Buffers<'_>, entry: u32| match state_value(
        buffers,
        u64::from(entry),
        p.dest_offset(),
    )
    .map(|(a, _)| a)
    {
        Some(NN_INST_ADDR) => Role::NnCommands,
        Some(TP_INST_ADDR) => Role::TpCommands,
        Some(PS_INST_ADDR) => Role::Instructions,
        _ => Role::Data,
    };
    match owner {
        Owner::Operation(k) => {
            let o = &cx.operations[k];
            match p.kind() {
                PATCH_STATE => state(&cx.states, o.state_id()),
                PATCH_COMMAND if op::is_nn_engine(o.kind()) => by_word(true, dest),
                PATCH_COMMAND if o.kind() == op::TP => by_word(false, dest),
                _ => Role::Data,
            }
        }
        Owner::HwInit(k) => {
            let h = &cx.hw_init[k];
            match p.kind() {
                PATCH_STATE => state(&cx.icd, h.state_id()),
                PATCH_COMMAND => match init_commands(cx, h) {
                    Ok((_, record)) => by_word(
                        engine_role(record) == Role::NnCommands,
                        dest % record.size as u64,
                    ),
                    Err(_) => Role::Data,
                },
                _ => Role::Data,
            }
        }
    }
}

/// One entry of a table of buffers cut out of its data (the v2 ICD, the v1 `lcd` and `icd`),
/// with what it holds.
#[derive(Clone, Debug, Serialize)]
pub struct Region {
    /// Its table entry.
    pub entry: usize,
    /// File offset.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// What the records and fields pointing at it say it holds.
    pub role: Role,
    /// The command layout of an entry of NN or TP commands (`nn_command_128`).
    pub layout: Option<&'static str>,
    /// Whether every byte is a decoded field: a state stream that decodes, or whole command
    /// records of a known layout.
    pub decoded: bool,
    /// The layout, for the round trip.
    #[serde(skip)]
    pub record: Option<Record>,
    /// An entry of commands: each record's words (the round trip and the diff read them).
    #[serde(skip)]
    pub words: Option<Vec<Vec<u32>>>,
}

/// The entries of the table `label` (`entries`, data-relative, the data at file offset `at`),
/// each with its role; the state streams decoded in `streams`, the command entries read here.
pub fn regions(
    cx: &Context<'_>,
    label: &str,
    entries: &[[u64; 2]],
    at: u64,
    streams: Option<&CommandStreams>,
    data: &Data<'_>,
) -> Vec<Region> {
    roles(cx, label, entries.len())
        .into_iter()
        .zip(entries)
        .enumerate()
        .map(|(entry, ((role, record), &[offset, size]))| {
            // A lookup table of the serializer's size reads as one table record.
            let lut = crate::nbg::fieldmap::tp_pwl_lut::RECORD;
            let (role, record) = match role {
                Role::LookupTable if size == lut.size as u64 => (role, Some(lut)),
                Role::LookupTable => (Role::TpBuffer, None),
                // Shader code is whole 128-bit instructions (Mesa's etnaviv ISA).
                Role::Instructions => {
                    (role, Some(crate::nbg::fieldmap::shader_instruction::RECORD))
                }
                _ => (role, record),
            };
            // The hardware-init graph's data buffers have no public layout: named unknown, by
            // word (by byte where the size is not whole words).
            let record = match record {
                None if role.is_data() && cx.icd.label == label => Some(if size % 4 == 0 {
                    crate::nbg::fieldmap::buffer_word::RECORD
                } else {
                    crate::nbg::fieldmap::buffer_byte::RECORD
                }),
                other => other,
            };
            let words = record
                .filter(|r| size > 0 && size % r.size as u64 == 0)
                .and_then(|r| command_tables::word_records(data, at + offset, size, r))
                .map(|w| w.words);
            let stream = role == Role::StateStream
                && size > 0
                && streams.is_some_and(|s| s.buffer(entry as u64).is_some());
            Region {
                entry,
                offset: at + offset,
                size,
                role,
                layout: record.map(|r| r.id),
                decoded: stream || words.is_some(),
                record,
                words,
            }
        })
        .collect()
}

impl Region {
    /// How the entry's records are named (`NBG_SECTION_ICD[5].tp[1]`,
    /// `NBG_SECTION_ICD[8].word[3]`).
    pub fn prefix(&self) -> &'static str {
        match self.role {
            Role::NnCommands => "nn",
            Role::TpCommands => "tp",
            Role::Instructions => "instruction",
            Role::LookupTable => "pwl_lut",
            _ if self.record == Some(crate::nbg::fieldmap::buffer_byte::RECORD) => "byte",
            _ => "word",
        }
    }
}

/// Whether `regions` can own their data one by one: non-empty ones disjoint, inside
/// `[start, end)`.
pub fn disjoint(regions: &[Region], start: u64, end: u64) -> bool {
    let mut spans: Vec<(u64, u64)> = regions
        .iter()
        .filter(|r| r.size > 0)
        .map(|r| (r.offset, r.offset + r.size))
        .collect();
    spans.sort_unstable();
    let mut cursor = start;
    for (a, b) in spans {
        if a < cursor || b > end {
            return false;
        }
        cursor = b;
    }
    true
}

/// Bytes of decoded command entries in fields the field map names unknown.
pub fn unknown_region_bytes(regions: Option<&[Region]>) -> u64 {
    regions
        .unwrap_or(&[])
        .iter()
        .map(|r| match (r.record, &r.words) {
            (Some(record), Some(words)) => {
                words.len() as u64 * command_tables::unknown_bytes(&record)
            }
            _ => 0,
        })
        .sum()
}
