//! The parsed v1 graph: header, feature database, memory fields, the fixed part, tables and
//! the CRC field, as the `--json` document holds them.

use super::*;

/// A parsed v1 graph: the `--json` document, plus the file bytes it borrows.
#[derive(Debug, Serialize)]
pub struct NbgV1<'data> {
    /// The file bytes (empty when parsed from a file with positioned reads).
    #[serde(skip)]
    pub bytes: &'data [u8],
    /// `nbg-v1`.
    pub format: &'static str,
    /// `known` for versions with evidence, `bounded-unknown` for newer ones.
    pub layout: f::Layout,
    /// Whole-file size and SHA-256.
    pub file: FileFacts,
    /// The fixed part's header fields.
    pub header: Header,
    /// The 256-byte feature database that follows the header.
    pub feature_database: FeatureDatabase,
    /// The memory pool fields after the feature database.
    pub memory_pool: MemoryPool,
    /// Memory pool size in bytes, as v2 reports it (section 37).
    pub memory_pool_bytes: u64,
    /// The AXI SRAM fields after the memory pool.
    pub axi_sram: Sram,
    /// AXI SRAM size in bytes, as v2 reports it (section 39).
    pub axi_sram_bytes: u32,
    /// The VIP SRAM fields, from 0x00010008.
    pub vip_sram: Option<Sram>,
    /// VIP SRAM size in bytes, as v2 reports it (section 38).
    pub vip_sram_bytes: Option<u32>,
    /// Where the fixed part ends and its entries lie.
    pub fixed_part: FixedPart,
    /// Bytes between the decoded fixed part and the first referenced table.
    pub opaque_fixed_extension: Extension,
    /// Every (offset, size) entry in on-disk order.
    pub tables: Vec<Table>,
    /// Tables whose entries point into another table's data: views, not owners.
    pub nested_tables: Vec<NestedTable>,
    /// The input table's records.
    #[serde(serialize_with = "crate::nbg::parse::serialize_io")]
    pub inputs: Vec<IoRecord>,
    /// The output table's records.
    #[serde(serialize_with = "crate::nbg::parse::serialize_io")]
    pub outputs: Vec<IoRecord>,
    /// The `load_states` buffers (one per `load_states_table` entry, from 0x00010018) as
    /// command streams; absent without both tables.
    pub load_states: Option<crate::nbg::parse::command_tables::CommandStreams>,
    /// Before 0x00010018, the `lcd` buffers operations name as their state buffers (by
    /// `state_id` into `lcd_table`), as command streams; the other `lcd` entries hold
    /// coefficients, instructions and data (`nbg patches` names each).
    pub lcd_streams: Option<crate::nbg::parse::command_tables::CommandStreams>,
    /// The `icd` buffers the hardware-init records name, as command streams.
    pub icd_streams: Option<crate::nbg::parse::command_tables::CommandStreams>,
    /// Every `lcd` entry with what the records and patches pointing at it say it holds; the
    /// ledger owns `lcd` entry by entry when they are disjoint.
    pub lcd_regions: Option<Vec<crate::nbg::parse::patch_targets::Region>>,
    /// Every `icd` entry, on the same terms.
    pub icd_regions: Option<Vec<crate::nbg::parse::patch_targets::Region>>,
    /// Every `coeff_data` entry (from 0x00010018), on the same terms.
    pub coeff_regions: Option<Vec<crate::nbg::parse::patch_targets::Region>>,
    /// Every `load_states` entry (from 0x00010018), on the same terms: its entries need not
    /// tile the table (0x0001001e aligns each to 64 bytes).
    pub load_states_regions: Option<Vec<crate::nbg::parse::patch_targets::Region>>,
    /// Every `ppu_instr` entry (from 0x00010018), on the same terms: shader instructions.
    pub ppu_instr_regions: Option<Vec<crate::nbg::parse::patch_targets::Region>>,
    /// The `nn` table's commands through the layout its record size selects (`holds`);
    /// absent where the table is not whole records of a known layout.
    pub nn_commands: Option<Vec<crate::nbg::parse::command_tables::NnCommand>>,
    /// The `tp` table's commands, on the same terms.
    pub tp_commands: Option<Vec<crate::nbg::parse::command_tables::TpCommand>>,
    /// `layers`, `operations`, `sh_operations`, `patches` (see `parse::records`).
    #[serde(flatten)]
    pub records: crate::nbg::parse::records::Records,
    /// The `nbg_crc_sum` field and how it relates to the rules.
    pub crc: CrcField,
    /// The final 512 bytes the runtime copies.
    pub connection_region: ConnectionRegion,
    /// Hash of the layout with payload bytes left out (see the module note).
    pub structural_signature: Hash256,
    /// Relations the public v1 files showed (`parse::invariants`); reported, never enforced.
    pub corpus_invariants: Vec<crate::nbg::parse::invariants::Invariant>,
}

/// The header at the start of the fixed part.
#[derive(Clone, Debug, Serialize)]
pub struct Header {
    /// `VPMN`.
    pub magic: &'static str,
    /// The version word (`0x0001xxxx`).
    pub version: u32,
    /// The target (product) word; recorded, not validated.
    pub target: u32,
    /// Compatibility alias of `target`.
    pub product: u32,
    /// The NUL-terminated network name.
    pub network_name: String,
    /// Bytes after the name's NUL, re-encoded exactly (JSON hex, only when non-zero).
    #[serde(skip_serializing_if = "crate::nbg::read::NameTail::is_zero")]
    pub network_name_trailing_bytes: crate::nbg::read::NameTail,
    /// Declared layers, checked against the layer table.
    pub layer_count: u32,
    /// Declared operations, checked against the operation table.
    pub operation_count: u32,
    /// Declared inputs, checked against the input table.
    pub input_count: u32,
    /// Declared outputs, checked against the output table.
    pub output_count: u32,
}

/// The 256-byte feature database: the bitfield word decoded, byte fields named as the public
/// headers name them, reserved areas counted and hashed.
#[derive(Clone, Debug, Serialize)]
pub struct FeatureDatabase {
    /// File offset of the feature database.
    pub offset: u64,
    /// The feature bitfield word as stored.
    pub raw_bits: u32,
    /// The feature bitfield's parts by name.
    pub bits: std::collections::BTreeMap<&'static str, u32>,
    /// NN command size in bytes by its feature code; null for an unknown code.
    pub nn_command_bytes: Option<u64>,
    /// TP command size in bytes by its feature code; null for an unknown code.
    pub tp_command_bytes: Option<u64>,
    /// The `num_pixel_pipes` word.
    pub num_pixel_pipes: u32,
    /// The `core_count` byte.
    pub core_count: u8,
    /// The `device_index` byte.
    pub device_index: u8,
    /// The `axi_bus_width_index` byte.
    pub axi_bus_width_index: u8,
    /// The `cluster_id_width` byte.
    pub cluster_id_width: u8,
    /// NN cores (`nn_core_count`).
    pub nn_core_count: u8,
    /// TP cores (`tp_core_count`).
    pub tp_core_count: u8,
    /// The two bytes after `tp_core_count` (reserved; kept for the round trip).
    #[serde(skip)]
    pub core_reserved: u16,
    /// The stored file CRC (`nbg_crc_sum`); zero in files without one.
    pub nbg_crc_sum: u32,
    /// The `vip_sram_width` word.
    pub vip_sram_width: u32,
    /// The vendor-reserved area.
    pub vsi_reserved: Reserved,
    /// The customer-reserved area.
    pub customer_reserved: Reserved,
}

impl FeatureDatabase {
    /// A part of the feature bitfield word (`v1_fixed::feature_bits::nn_command_size`).
    pub fn bit(&self, part: crate::nbg::fieldmap::BitPart) -> u32 {
        part.get_as(u64::from(self.raw_bits))
    }
}

/// A reserved area: counted and hashed, never interpreted.
#[derive(Clone, Debug, Serialize)]
pub struct Reserved {
    /// Size in bytes.
    pub bytes: usize,
    /// Bytes that are not zero.
    pub nonzero_bytes: usize,
    /// SHA-256 of the area.
    pub sha256: Hash256,
    /// The bytes themselves, for the round trip (not part of the document).
    #[serde(skip)]
    pub raw: Vec<u8>,
}

impl Reserved {
    pub(super) fn of(bytes: &[u8]) -> Self {
        Reserved {
            bytes: bytes.len(),
            nonzero_bytes: bytes.iter().filter(|&&b| b != 0).count(),
            sha256: Hash256::of(bytes),
            raw: bytes.to_vec(),
        }
    }
}

/// The memory pool fields of the fixed part.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryPool {
    /// Pool size in bytes.
    pub size: u32,
    /// Pool alignment in bytes.
    pub alignment: u32,
    /// Pool base address.
    pub base: u32,
}

/// An SRAM's fields in the fixed part.
#[derive(Clone, Debug, Serialize)]
pub struct Sram {
    /// Base address.
    pub base: u32,
    /// Size in bytes.
    pub size: u32,
}

/// The fixed part: header, feature database, memory fields and entries.
#[derive(Clone, Debug, Serialize)]
pub struct FixedPart {
    /// End of the decoded fixed part (header, feature database, memory fields, entries).
    pub size: u64,
    /// File offset of entry 0.
    pub entries_offset: u64,
    /// Entries the parser decodes for the version.
    pub entry_count: usize,
    /// How many of them the public layout has.
    pub public_entry_count: usize,
    /// Entries beyond the public layout that the version has (the vendor reader's gates).
    pub extension_entries: Vec<&'static str>,
    /// Where the version's layout comes from (`format::v1::layout_evidence`): `proved`,
    /// `vendor-reader` or `bounded-unknown`.
    pub evidence: f::LayoutEvidence,
}

/// The opaque fixed extension: fingerprinted, never named.
#[derive(Clone, Debug, Serialize)]
pub struct Extension {
    /// File offset of its first byte.
    pub offset: u64,
    /// Bytes, possibly zero.
    pub size: u64,
    /// Fingerprint of its bytes.
    pub fingerprint: Fingerprint,
}

/// One (offset, size) entry of the fixed part and the table it places.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    /// Position in the entry list.
    pub index: usize,
    /// The entry's name (`format::v1::ENTRIES`).
    pub name: &'static str,
    /// The v2 section type with the same role (entry k is type k + 1).
    pub section_type: u32,
    /// How far the entry is established: `public`, `proved` or `vendor-reader`.
    pub evidence: &'static str,
    /// File offset of the 8-byte (offset, size) entry.
    pub entry_offset: u64,
    /// File offset of the table.
    pub offset: u64,
    /// Table size in bytes.
    pub size: u64,
    /// Bytes per record, where the public sources or the corpus establish it.
    pub record_size: Option<u64>,
    /// `size / record_size`, where the record size is known.
    pub record_count: Option<u64>,
    /// Whether the parser decodes this table's records (I/O and nested index tables).
    pub decoded: bool,
    /// Fingerprint of a non-empty table's bytes.
    pub fingerprint: Option<Fingerprint>,
}

impl Table {
    /// One past the table's last byte.
    pub fn end(&self) -> u64 {
        self.offset + self.size
    }
}

/// A table of (offset, size) entries into another table's data: a view, not an owner.
#[derive(Clone, Debug, Serialize)]
pub struct NestedTable {
    /// The entry table's name.
    pub table: &'static str,
    /// The table its entries point into.
    pub target: &'static str,
    /// Number of entries.
    pub entry_count: usize,
    /// (offset, size) relative to the target table's data.
    pub entries: Vec<[u64; 2]>,
}

/// The v1 CRC field and how it relates to the rules.
#[derive(Clone, Debug, Serialize)]
pub struct CrcField {
    /// File offset of `nbg_crc_sum`.
    pub offset: u64,
    /// The stored value.
    pub stored: u32,
    /// CRC-32 of the whole file with the four field bytes zeroed (the corroborated rule).
    pub computed_whole_file_zeroed: u32,
    /// How the stored value relates to the rules.
    pub classification: CrcClass,
    /// The registry rule that reproduces `stored`, when one does.
    pub rule: Option<String>,
}

impl<'data> NbgV1<'data> {
    /// The table called `name`, when the version has it.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}

impl NbgV1<'_> {
    /// The entries a table of buffers is cut into (`lcd`, `icd`, `coeff_data`, `load_states`,
    /// `ppu_instr`), and the state
    /// streams among them.
    pub fn regions_of(
        &self,
        name: &str,
    ) -> (
        Option<&[crate::nbg::parse::patch_targets::Region]>,
        Option<&crate::nbg::parse::command_tables::CommandStreams>,
    ) {
        match name {
            "lcd" => (self.lcd_regions.as_deref(), self.lcd_streams.as_ref()),
            "icd" => (self.icd_regions.as_deref(), self.icd_streams.as_ref()),
            "coeff_data" => (self.coeff_regions.as_deref(), None),
            "load_states" => (
                self.load_states_regions.as_deref(),
                self.load_states.as_ref(),
            ),
            "ppu_instr" => (self.ppu_instr_regions.as_deref(), None),
            _ => (None, None),
        }
    }

    /// The table whose entries MISC_DYNA_GENERIC patches index (`patch_context`'s `dynamic`),
    /// which holds the NN coefficient buffers: `coeff_data` where the file has its own index
    /// table for it (from 0x00010018), else `lcd`.
    pub fn coefficient_table(&self) -> &'static str {
        let own = self
            .nested_tables
            .iter()
            .any(|n| n.table == "coeff_data_table");
        if own { "coeff_data" } else { "lcd" }
    }

    /// What the patch records refer to (`parse::patch_targets`); `None` without a decoded
    /// patch table. From 0x00010018 the state buffers, coefficients, temporaries and
    /// instructions have tables of their own; before, the loading-config data (`lcd`) holds
    /// them all.
    pub fn patch_context(&self) -> Option<crate::nbg::parse::patch_targets::Context<'_>> {
        use crate::nbg::parse::patch_targets::{Buffers, CommandTable, Context, Indexed};
        use std::borrow::Cow;
        let nested = |name: &str| {
            self.nested_tables
                .iter()
                .find(|n| n.table == name)
                .map(|n| &n.entries[..])
        };
        let own = |table: &'static str, data: &'static str| {
            nested(table).map(|entries| Indexed {
                label: data,
                entries: Cow::Borrowed(entries),
            })
        };
        let lcd = || own("lcd_table", "lcd");
        let states = match (nested("load_states_table"), self.load_states.as_ref()) {
            (Some(entries), Some(streams)) => Buffers {
                label: "load_states",
                entries,
                streams: Some(streams),
            },
            _ => Buffers {
                label: "lcd",
                entries: nested("lcd_table").unwrap_or(&[]),
                streams: self.lcd_streams.as_ref(),
            },
        };
        let commands = |name: &'static str, count: Option<usize>| {
            let t = self.table(name)?;
            Some(CommandTable {
                label: name,
                record: crate::nbg::holds::v1(name)?.record(t.record_size?)?,
                count: count?,
            })
        };
        let icd = Buffers {
            label: "icd",
            entries: nested("icd_table").unwrap_or(&[]),
            streams: self.icd_streams.as_ref(),
        };
        Some(Context {
            dynamic: own("coeff_data_table", "coeff_data").or_else(lcd),
            dynamic_io: own("dyna_io_table", "dyna_io").or_else(lcd),
            instructions: own("ppu_instr_table", "ppu_instr").or_else(lcd),
            nn: commands("nn", self.nn_commands.as_ref().map(Vec::len)),
            tp: commands("tp", self.tp_commands.as_ref().map(Vec::len)),
            inputs: self.inputs.len(),
            outputs: self.outputs.len(),
            ..Context::of(&self.records, states, icd)?
        })
    }
}
