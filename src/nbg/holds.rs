//! Which records each v2 section and v1 table holds, decided here once: the parsers' `decoded`
//! flags, the diff's field naming, the re-encoder and the Kaitai export all read this table,
//! and a record with two layouts (the 28- and 40-byte patch records) is chosen by size here
//! only. A new record kind is one row.

use crate::nbg::fieldmap::{self as fm, Record};
use crate::nbg::format::section;

/// What a section or table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holds {
    /// Input or output records (their layout is the version's `IoLayout`).
    Io,
    /// The v2 network-info record.
    NetworkInfo,
    /// The v2 memory-pool record.
    MemoryPool,
    /// The v2 VIP SRAM record.
    VipSram,
    /// The v2 AXI SRAM record.
    AxiSram,
    /// The v2 section-40 checksum records.
    Checksums,
    /// The v2 DYNAIO table's (offset, size) records.
    DynaioEntries,
    /// NN commands (v2 section 7, the v1 `nn` table) of the layout their record size selects.
    NnCommands,
    /// TP commands (v2 section 8, the v1 `tp` table) of the layout their record size selects.
    TpCommands,
    /// A v2 index table's (offset, size) records into its data section
    /// (`format::section::indexed_by`).
    IndexEntries,
    /// Layer records.
    Layers,
    /// Operation records.
    Operations,
    /// SH operation records.
    ShOperations,
    /// Patch records (28 or 40 bytes).
    Patches,
    /// v1 SW operation records.
    SwOperations,
    /// Hardware-init operation records (v1 hw_init table, v2 section 13).
    HwInitOperations,
    /// v1 PPU parameter records.
    PpuParams,
}

impl Holds {
    /// Whether these are the graph's own records (layers, operations, SH, patch, SW,
    /// hardware-init and PPU-parameter records), which `parse::records` decodes into typed
    /// values.
    pub fn graph_records(self) -> bool {
        matches!(
            self,
            Holds::Layers
                | Holds::Operations
                | Holds::ShOperations
                | Holds::Patches
                | Holds::SwOperations
                | Holds::HwInitOperations
                | Holds::PpuParams
        )
    }
}

/// One row: what it holds, where (v2 section type, v1 table names), its layouts and the
/// Kaitai type the v1 export reads it with.
pub struct Kind {
    /// What it holds.
    pub holds: Holds,
    /// The v2 section type that holds it, if any.
    pub v2_section: Option<u32>,
    /// The v1 tables that hold it.
    pub v1_tables: &'static [&'static str],
    /// Its record layouts (several only where the size selects one).
    pub records: &'static [Record],
    /// The Kaitai type of a v1 table of it.
    pub ksy: Option<&'static str>,
}

/// Every kind.
pub const KINDS: &[Kind] = &[
    Kind {
        holds: Holds::Io,
        v2_section: None,
        v1_tables: &["input", "output"],
        records: &[],
        ksy: Some("v1_io_any_table"),
    },
    Kind {
        holds: Holds::Io,
        v2_section: Some(section::INPUT),
        v1_tables: &[],
        records: &[fm::v2_io_record::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::Io,
        v2_section: Some(section::OUTPUT),
        v1_tables: &[],
        records: &[fm::v2_io_record::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::NetworkInfo,
        v2_section: Some(section::NETWORK_INFO),
        v1_tables: &[],
        records: &[fm::v2_network_info::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::MemoryPool,
        v2_section: Some(section::MEMORY_POOL),
        v1_tables: &[],
        records: &[fm::v2_memory_pool::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::VipSram,
        v2_section: Some(section::VIP_SRAM),
        v1_tables: &[],
        records: &[fm::v2_vip_sram::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::AxiSram,
        v2_section: Some(section::AXI_SRAM),
        v1_tables: &[],
        records: &[fm::v2_axi_sram::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::Checksums,
        v2_section: Some(section::CHECKSUM),
        v1_tables: &[],
        records: &[fm::v2_checksum_record::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::DynaioEntries,
        v2_section: Some(section::DYNAIO_TABLE),
        v1_tables: &[],
        records: &[fm::v2_dynaio_entry::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::NnCommands,
        v2_section: Some(section::NN),
        v1_tables: &[],
        records: &[fm::nn_command::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::TpCommands,
        v2_section: Some(section::TP),
        v1_tables: &[],
        records: &[fm::tp_command::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::NnCommands,
        v2_section: None,
        v1_tables: &["nn"],
        records: &fm::NN_LAYOUTS,
        ksy: None,
    },
    Kind {
        holds: Holds::TpCommands,
        v2_section: None,
        v1_tables: &["tp"],
        records: &fm::TP_LAYOUTS,
        ksy: None,
    },
    Kind {
        holds: Holds::IndexEntries,
        v2_section: Some(section::ICDT),
        v1_tables: &[],
        records: &[fm::v2_index_entry::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::IndexEntries,
        v2_section: Some(section::COEF_DATA_TABLE),
        v1_tables: &[],
        records: &[fm::v2_index_entry::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::IndexEntries,
        v2_section: Some(section::COEF_HEADER_TABLE),
        v1_tables: &[],
        records: &[fm::v2_index_entry::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::IndexEntries,
        v2_section: Some(section::PPU_INSTR_TABLE),
        v1_tables: &[],
        records: &[fm::v2_index_entry::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::IndexEntries,
        v2_section: Some(section::LOADSTATE_TABLE),
        v1_tables: &[],
        records: &[fm::v2_index_entry::RECORD],
        ksy: None,
    },
    Kind {
        holds: Holds::Layers,
        v2_section: Some(section::LAYER),
        v1_tables: &["layer"],
        records: &[fm::layer::RECORD],
        ksy: Some("layer_table"),
    },
    Kind {
        holds: Holds::Operations,
        v2_section: Some(section::OPERATIONS),
        v1_tables: &["operation"],
        records: &[fm::operation::RECORD],
        ksy: Some("operation_table"),
    },
    Kind {
        holds: Holds::ShOperations,
        v2_section: Some(section::SH),
        v1_tables: &["sh"],
        records: &[fm::sh_operation::RECORD],
        ksy: Some("sh_operation_table"),
    },
    Kind {
        holds: Holds::Patches,
        v2_section: Some(section::PATCH),
        v1_tables: &["patch"],
        records: &[fm::patch::RECORD, fm::patch_40bit::RECORD],
        ksy: Some("v1_patch_any_table"),
    },
    Kind {
        holds: Holds::SwOperations,
        v2_section: None,
        v1_tables: &["sw"],
        records: &[fm::v1_sw_operation::RECORD],
        ksy: Some("v1_sw_operation_table"),
    },
    Kind {
        holds: Holds::HwInitOperations,
        v2_section: Some(section::HWINITOPERATIONS),
        v1_tables: &["hw_init"],
        records: &[fm::hw_init_operation::RECORD],
        ksy: Some("hw_init_operation_table"),
    },
    Kind {
        holds: Holds::PpuParams,
        v2_section: None,
        v1_tables: &["ppu_param"],
        records: &[fm::v1_ppu_param::RECORD],
        ksy: Some("v1_ppu_param_table"),
    },
];

impl Holds {
    /// Whether the section is one record (network info, memory sizes), not a table of them.
    pub fn is_single_record(self) -> bool {
        matches!(
            self,
            Holds::NetworkInfo | Holds::MemoryPool | Holds::VipSram | Holds::AxiSram
        )
    }
}

impl Kind {
    /// The Kaitai type a v2 section of this kind is read with: the record, a table of it, or
    /// the patch table of either size.
    pub fn v2_ksy(&self) -> Option<String> {
        let id = |r: &Record| r.id.replace('.', "_");
        match self.records {
            [] => None,
            [one] if self.holds.is_single_record() => Some(id(one)),
            [one] => Some(format!("{}_table", id(one))),
            _ if self.holds == Holds::Patches => Some("patch_any_table".into()),
            _ => None,
        }
    }
}

/// What a v2 section type holds; `None` for an opaque payload.
pub fn v2(section_type: u32) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.v2_section == Some(section_type))
}

/// What a v1 table holds; `None` for payloads and index tables.
pub fn v1(table: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.v1_tables.contains(&table))
}

/// Record size of a v1 table for a version, where the public sources or corpus establish it:
/// the row's layout (the 40-byte patch layout from `format::v1::PATCH_40BIT_SINCE`) at the
/// version, an I/O table's version layout, a command table's size code, or an index table's
/// (offset, size) entry. A version newer than any with evidence keeps only the I/O record size
/// (the newest known one, checked against the table size); its other tables stay opaque.
pub fn v1_record_size(name: &str, version: u32, nn_code: u32, tp_code: u32) -> Option<u64> {
    use crate::nbg::format::v1 as f1;
    if f1::Layout::of(version) == f1::Layout::BoundedUnknown && !matches!(name, "input" | "output")
    {
        return None;
    }
    match name {
        "input" | "output" => return Some(f1::io_record_size(version)),
        "nn" => return f1::command_bytes(nn_code),
        "tp" => return f1::command_bytes(tp_code),
        "lcd_table" | "icd_table" | "coeff_data_table" | "ppu_instr_table" | "dyna_io_table"
        | "load_states_table" => return Some(fm::v1_entry::SIZE as u64),
        _ => {}
    }
    let kind = v1(name)?;
    let record = match kind.holds {
        // 40-byte records are observed in every 0x00010014+ file; the gate is not public.
        Holds::Patches if version >= f1::PATCH_40BIT_SINCE => kind.records.get(1)?,
        _ => kind.records.first()?,
    };
    Some(record.size_at(version) as u64)
}

impl Kind {
    /// The layout of `size`-byte records (a record whose later fields are gated by version
    /// matches each of its sizes); `None` when no layout has that size.
    pub fn record(&self, size: u64) -> Option<Record> {
        self.records
            .iter()
            .find(|r| size > 0 && r.has_size(size as usize))
            .copied()
    }
}
