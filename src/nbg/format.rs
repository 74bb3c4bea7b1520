//! The format's numbers and names, in one place.
//!
//! Every offset, width, limit and public enum name the parsers and the builder use lives here,
//! so that a field is defined once (the single source of truth the readers and writers share).
//! Values come from the field map (`nbg-field-map.txt`) and the public VIPLite / TIM-VX headers.

/// ASCII `VPMN`, the first four bytes of every NBG.
pub const MAGIC: [u8; 4] = *b"VPMN";

/// The one v2 version the field map resolves.
pub const V2_VERSION: u32 = 0x0002_0000;
/// The v1 family: `version >> 16 == 1`.
pub const V1_MAJOR: u32 = 0x0001;

/// v2 `nbg_format_header_t`.
pub mod v2 {
    pub const HEADER_SIZE: usize = 48;
    pub const OFF_MAGIC: usize = 0x00;
    pub const OFF_VERSION: usize = 0x04;
    pub const OFF_TARGET: usize = 0x08;
    pub const OFF_CRC_SUM: usize = 0x0c;
    pub const OFF_TOTAL_SIZE_LOW: usize = 0x10;
    pub const OFF_TOTAL_SIZE_HIGH: usize = 0x14;
    pub const OFF_SUB_HEADER_OFFSET: usize = 0x18;
    pub const OFF_SUB_HEADER_SIZE: usize = 0x1c;
    pub const OFF_SUB_HEADER_COUNT: usize = 0x20;
    pub const OFF_CLASS_WORD: usize = 0x24;
    pub const OFF_RESERVED2: usize = 0x28;
    pub const OFF_RESERVED3: usize = 0x2c;

    /// `nbg_sub_header_t`: sh_offset, sh_size, sh_count.
    pub const SUB_HEADER_SIZE: u32 = 12;
    /// The parser returns one graph, so it accepts exactly one sub-header.
    pub const SUB_HEADER_COUNT: u32 = 1;

    /// `nbg_section_header_t`: 11 little-endian words.
    pub const SECTION_HEADER_SIZE: u32 = 44;
    /// Reviewed bound, checked before any directory entry is read.
    pub const MAX_SECTIONS: u32 = 256;

    /// `nbg_section_input_output_t`.
    pub const IO_RECORD_SIZE: u64 = 112;
    pub const IO_MAX_RECORDS: u64 = 256;
    pub const IO_MAX_DIMS: u32 = 6;
    pub const IO_NAME_OFFSET: usize = 0x30;
    pub const IO_NAME_SIZE: usize = 64;

    /// `nbg_section_network_info_t`.
    pub const NETWORK_INFO_SIZE: u64 = 220;
    pub const NETWORK_NAME_SIZE: usize = 64;
    pub const VSI_RESERVED_OFFSET: usize = 0x60;
    pub const VSI_RESERVED_WORDS: usize = 31;

    /// Section-40 record: sd_type, checksum_value.
    pub const CHECKSUM_RECORD_SIZE: u64 = 8;
    /// DYNAIO table record: region-relative offset, payload size.
    pub const DYNAIO_RECORD_SIZE: u64 = 8;
    /// DYNAIO entries and the region are laid out in 64-byte units.
    pub const DYNAIO_ALIGN: u64 = 64;

    /// Memory metadata widths.
    pub const MEMORY_POOL_SIZE: u64 = 8;
    pub const VIP_SRAM_SIZE: u64 = 4;
    pub const AXI_SRAM_SIZE: u64 = 4;
}

/// The runtime copies the final 512 bytes of a graph into its model object.
pub const CONNECTION_REGION_SIZE: u64 = 512;

/// Largest derived tensor storage the parser accepts (1 TiB).
pub const MAX_TENSOR_STORAGE: u64 = 1 << 40;

/// Public v2 section IDs (`NBG_SECTION_*`); the enum is append-only and 0..=40 are named.
pub mod section {
    pub const NONE: u32 = 0;
    pub const INPUT: u32 = 1;
    pub const OUTPUT: u32 = 2;
    pub const LAYER: u32 = 3;
    pub const OPERATIONS: u32 = 4;
    pub const NN: u32 = 7;
    pub const TP: u32 = 8;
    pub const SH: u32 = 9;
    pub const PATCH: u32 = 10;
    pub const PPU_INSTR: u32 = 19;
    pub const DYNAIO: u32 = 20;
    pub const LOADSTATE: u32 = 21;
    pub const COEF_DATA_TABLE: u32 = 23;
    pub const COEF_DATA: u32 = 24;
    pub const PPU_INSTR_TABLE: u32 = 25;
    pub const DYNAIO_TABLE: u32 = 26;
    pub const LOADSTATE_TABLE: u32 = 27;
    pub const NETWORK_INFO: u32 = 35;
    pub const MEMORY_POOL: u32 = 37;
    pub const VIP_SRAM: u32 = 38;
    pub const AXI_SRAM: u32 = 39;
    pub const CHECKSUM: u32 = 40;
    pub const MAX_ID: u32 = 40;

    const NAMES: [&str; 41] = [
        "NBG_SECTION_NONE",
        "NBG_SECTION_INPUT",
        "NBG_SECTION_OUTPUT",
        "NBG_SECTION_LAYER",
        "NBG_SECTION_OPERATIONS",
        "NBG_SECTION_COEF_HEADER_TABLE",
        "NBG_SECTION_COEF_HEADER",
        "NBG_SECTION_NN",
        "NBG_SECTION_TP",
        "NBG_SECTION_SH",
        "NBG_SECTION_PATCH",
        "NBG_SECTION_LAYER_PARAM",
        "NBG_SECTION_SW",
        "NBG_SECTION_HWINITOPERATIONS",
        "NBG_SECTION_ICDT",
        "NBG_SECTION_ICD",
        "NBG_SECTION_PPU_PARAM",
        "NBG_SECTION_OPSYNC",
        "NBG_SECTION_DMA_SBI_INFO",
        "NBG_SECTION_PPU_INSTR",
        "NBG_SECTION_DYNAIO",
        "NBG_SECTION_LOADSTATE",
        "NBG_SECTION_DMA_SBI_ADDITION",
        "NBG_SECTION_COEF_DATA_TABLE",
        "NBG_SECTION_COEF_DATA",
        "NBG_SECTION_PPU_INSTR_TABLE",
        "NBG_SECTION_DYNAIO_TABLE",
        "NBG_SECTION_LOADSTATE_TABLE",
        "NBG_SECTION_LAYER_DUMP_OPERATION",
        "NBG_SECTION_LAYER_DUMP_OUTPUTS",
        "NBG_SECTION_LAYER_DUMP_PATCH_DATA",
        "NBG_SECTION_LAYER_DUMP_INSTR_TABLE",
        "NBG_SECTION_LAYER_DUMP_INSTR",
        "NBG_SECTION_LAYER_DUMP_LOADSTATE_TABLE",
        "NBG_SECTION_LAYER_DUMP_LOADSTATE",
        "NBG_SECTION_NETWORK_INFO",
        "NBG_SECTION_CUSTOMER_DATA",
        "NBG_SECTION_MEMORY_POOL",
        "NBG_SECTION_VIP_SRAM",
        "NBG_SECTION_AXI_SRAM",
        "NBG_SECTION_CHECKSUM",
    ];

    /// Public name of a section ID, or `None` outside 0..=40.
    pub fn name(id: u32) -> Option<&'static str> {
        NAMES.get(id as usize).copied()
    }

    /// Sections whose records the v2 parser decodes (the rest are named, bounded and opaque).
    pub fn is_decoded(id: u32) -> bool {
        matches!(
            id,
            INPUT
                | OUTPUT
                | LAYER
                | OPERATIONS
                | SH
                | PATCH
                | DYNAIO_TABLE
                | NETWORK_INFO
                | MEMORY_POOL
                | VIP_SRAM
                | AXI_SRAM
                | CHECKSUM
        )
    }
}

/// Public buffer formats (`vip_buffer_format_e`) with their element width in bits.
pub mod buffer_format {
    const FORMATS: [Option<(&str, u32)>; 17] = [
        Some(("FP32", 32)),
        Some(("FP16", 16)),
        Some(("UINT8", 8)),
        Some(("INT8", 8)),
        Some(("UINT16", 16)),
        Some(("INT16", 16)),
        Some(("CHAR", 8)),
        Some(("BFP16", 16)),
        Some(("INT32", 32)),
        Some(("UINT32", 32)),
        Some(("INT64", 64)),
        Some(("UINT64", 64)),
        Some(("FP64", 64)),
        Some(("INT4", 4)),
        Some(("UINT4", 4)),
        None, // 15 is unassigned in the pinned header
        Some(("BOOL8", 8)),
    ];

    /// Name and element bits of a format ID, `None` when unassigned or unknown.
    pub fn lookup(id: u32) -> Option<(&'static str, u32)> {
        FORMATS.get(id as usize).copied().flatten()
    }
}

/// Public buffer data types (`vip_buffer_type_e`).
pub mod data_type {
    const NAMES: [&str; 4] = ["TENSOR", "IMAGE", "ARRAY", "SCALAR"];
    pub fn name(id: u32) -> Option<&'static str> {
        NAMES.get(id as usize).copied()
    }
}

/// Public quantization formats (`vip_buffer_quantize_format_e`).
pub mod quantization {
    pub const NONE: u32 = 0;
    pub const DYNAMIC_FIXED_POINT: u32 = 1;
    pub const AFFINE_ASYMMETRIC: u32 = 2;
    const NAMES: [&str; 3] = ["NONE", "DYNAMIC_FIXED_POINT", "AFFINE_ASYMMETRIC"];
    pub fn name(id: u32) -> Option<&'static str> {
        NAMES.get(id as usize).copied()
    }
}

/// Network-info attribute bitfield: command-size codes map to bytes where the header says so.
pub mod attribute {
    pub const CHANGE_PPU_PARAM_BIT: u32 = 0;
    pub const NN_CMD_SHIFT: u32 = 1;
    pub const TP_CMD_SHIFT: u32 = 3;
    pub const DMA_SHIFT: u32 = 5;
    pub const FIELD_MASK: u32 = 0b11;
    pub const RESERVED_SHIFT: u32 = 7;
    /// Only code 1 (192-byte commands) is established; other codes are reported as unknown.
    pub fn command_bytes(code: u32) -> Option<u32> {
        (code == 1).then_some(192)
    }
}

/// The v1 family (`version >> 16 == 1`), as laid out by the public TIM-VX `nbg_parser` and the
/// older and newer public VIPLite v1 readers, extended only where the public corpus proves it.
pub mod v1 {
    /// Oldest version with the feature database (and the CRC field inside it).
    pub const MIN_VERSION: u32 = 0x0001_0003;
    /// Newest version the project has evidence for (public files of it exist). Newer versions
    /// of the family still parse when their fixed part can be bounded (`Layout::BoundedUnknown`).
    pub const MAX_KNOWN_VERSION: u32 = 0x0001_001e;

    /// How much of a version's fixed part the project knows.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Layout {
        /// A version up to `MAX_KNOWN_VERSION`: public layout, corpus-proved extensions.
        Known,
        /// A newer version: the public entries are read, the fixed part is bounded by the
        /// lowest referenced table, and everything between is an opaque extension.
        BoundedUnknown,
    }

    impl Layout {
        /// The layout class of a v1 version at or above `MIN_VERSION`.
        pub fn of(version: u32) -> Layout {
            if version <= MAX_KNOWN_VERSION {
                Layout::Known
            } else {
                Layout::BoundedUnknown
            }
        }
    }

    pub const OFF_TARGET: usize = 0x08;
    pub const OFF_NETWORK_NAME: usize = 0x0c;
    pub const NETWORK_NAME_SIZE: usize = 64;
    pub const OFF_LAYER_COUNT: usize = 0x4c;
    pub const OFF_OPERATION_COUNT: usize = 0x50;
    pub const OFF_INPUT_COUNT: usize = 0x54;
    pub const OFF_OUTPUT_COUNT: usize = 0x58;

    /// 256-byte feature database, from 0x00010003.
    pub const FEATURE_DB: usize = 0x5c;
    pub const FEATURE_DB_SIZE: usize = 256;
    pub const OFF_NUM_PIXEL_PIPES: usize = 0x60;
    pub const OFF_CORE_COUNT: usize = 0x64;
    pub const OFF_DEVICE_INDEX: usize = 0x65;
    pub const OFF_AXI_BUS_WIDTH_INDEX: usize = 0x66;
    pub const OFF_CLUSTER_ID_WIDTH: usize = 0x67;
    pub const OFF_NN_CORE_COUNT: usize = 0x68;
    pub const OFF_TP_CORE_COUNT: usize = 0x69;
    /// `nbg_crc_sum` in the newer public VIPLite v1 header.
    pub const OFF_CRC: usize = 0x6c;
    pub const OFF_VIP_SRAM_WIDTH: usize = 0x70;
    pub const OFF_VSI_RESERVED: usize = 0x74;
    pub const VSI_RESERVED_SIZE: usize = 40;
    pub const OFF_CUSTOMER_RESERVED: usize = 0x9c;
    pub const CUSTOMER_RESERVED_SIZE: usize = 192;

    /// Memory pool (size, alignment, base) and AXI SRAM (base, size) follow the feature database.
    pub const OFF_MEMORY_POOL: usize = 0x15c;
    pub const OFF_AXI_SRAM: usize = 0x168;
    /// VIP SRAM (base, size), from 0x00010008.
    pub const OFF_VIP_SRAM: usize = 0x170;
    pub const VIP_SRAM_SINCE: u32 = 0x0001_0008;

    /// Feature-database word bits (LSB first), as named by the public headers.
    pub const FEATURE_BITS: [(&str, u32, u32); 17] = [
        ("hi_reorder_fix", 0, 1),
        ("ocb_counter", 1, 1),
        ("nn_command_size", 2, 2),
        ("change_ppu_param", 4, 1),
        ("tp_command_size", 5, 2),
        ("support_dma", 7, 2),
        ("nbg_40bit_va", 9, 2),
        ("isp_emulator", 11, 1),
        ("relat_addr_ker_id", 12, 2),
        ("relat_addr_inimage_id", 14, 2),
        ("relat_addr_secinimage_id", 16, 2),
        ("relat_addr_outimage_id", 18, 2),
        ("denoise_bypass", 20, 1),
        ("command_loop", 21, 1),
        ("job_cancel", 22, 1),
        ("nn_tp_probe", 23, 1),
        ("kernel_descriptor", 24, 1),
    ];
    /// `nn_transpose_phase2` at bit 25; bits 26..31 are reserved.
    pub const FEATURE_BIT_NN_TRANSPOSE_PHASE2: u32 = 25;

    /// NN and TP command sizes by their feature-database code.
    pub fn command_bytes(code: u32) -> Option<u64> {
        match code {
            0 => Some(128),
            1 => Some(192),
            _ => None,
        }
    }

    /// How far a fact about an entry is established.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Evidence {
        /// In the public TIM-VX / VIPLite v1 layout.
        Public,
        /// Beyond that layout; bounds and semantics consistent across every corpus file of the
        /// version (nested tables land inside their data, counts match records).
        Proved,
        /// Beyond that layout; always empty in the corpus, so only the name is inferred (from
        /// the append-only public section enum).
        Inferred,
    }

    impl Evidence {
        pub fn as_str(self) -> &'static str {
            match self {
                Evidence::Public => "public",
                Evidence::Proved => "proved",
                Evidence::Inferred => "inferred",
            }
        }
    }

    /// An (offset, size) entry of the fixed part: its name, the version it appears from, and
    /// the table it nests into (entries relative to that table's data).
    #[derive(Clone, Copy, Debug)]
    pub struct Entry {
        pub name: &'static str,
        pub since: u32,
        pub evidence: Evidence,
        pub nests_into: Option<&'static str>,
    }

    const fn e(
        name: &'static str,
        since: u32,
        evidence: Evidence,
        nests_into: Option<&'static str>,
    ) -> Entry {
        Entry {
            name,
            since,
            evidence,
            nests_into,
        }
    }

    /// The entries in on-disk order; entry k is v2 section type k + 1.
    pub const ENTRIES: [Entry; 27] = [
        e("input", 0, Evidence::Public, None),
        e("output", 0, Evidence::Public, None),
        e("layer", 0, Evidence::Public, None),
        e("operation", 0, Evidence::Public, None),
        e("lcd_table", 0, Evidence::Public, Some("lcd")),
        e("lcd", 0, Evidence::Public, None),
        e("nn", 0, Evidence::Public, None),
        e("tp", 0, Evidence::Public, None),
        e("sh", 0, Evidence::Public, None),
        e("patch", 0, Evidence::Public, None),
        e("layer_param", 0, Evidence::Public, None),
        e("sw", 0, Evidence::Public, None),
        e("hw_init", 0x0001_000c, Evidence::Public, None),
        e("icd_table", 0x0001_000c, Evidence::Public, Some("icd")),
        e("icd", 0x0001_000c, Evidence::Public, None),
        e("ppu_param", 0x0001_000e, Evidence::Public, None),
        e("op_sync", 0x0001_0014, Evidence::Inferred, None),
        e("dma_sbi_info", 0x0001_0014, Evidence::Inferred, None),
        e("ppu_instr", 0x0001_001e, Evidence::Proved, None),
        e("dyna_io", 0x0001_001e, Evidence::Proved, None),
        e("load_states", 0x0001_001e, Evidence::Proved, None),
        e("dma_sbi_addition", 0x0001_001e, Evidence::Inferred, None),
        e(
            "coeff_data_table",
            0x0001_001e,
            Evidence::Proved,
            Some("coeff_data"),
        ),
        e("coeff_data", 0x0001_001e, Evidence::Proved, None),
        e(
            "ppu_instr_table",
            0x0001_001e,
            Evidence::Proved,
            Some("ppu_instr"),
        ),
        e(
            "dyna_io_table",
            0x0001_001e,
            Evidence::Proved,
            Some("dyna_io"),
        ),
        e(
            "load_states_table",
            0x0001_001e,
            Evidence::Proved,
            Some("load_states"),
        ),
    ];

    /// Entries of the public layout (TIM-VX reads these); the rest are corpus extensions.
    pub const PUBLIC_ENTRIES: usize = 16;

    /// Versions whose entries beyond the public layout the corpus proves. Any other version
    /// above 0x0001000e keeps the bytes after the public layout as an opaque extension.
    pub const PROVED_EXTENSIONS: [(u32, usize); 3] =
        [(0x0001_0014, 18), (0x0001_0016, 18), (0x0001_001e, 27)];

    /// Offset of entry 0 for a version (the fixed header shrinks before 0x00010008).
    pub fn entries_offset(version: u32) -> usize {
        if version >= VIP_SRAM_SINCE {
            0x178
        } else {
            0x170
        }
    }

    /// Number of (offset, size) entries the parser decodes for a version.
    pub fn entry_count(version: u32) -> usize {
        if let Some(&(_, n)) = PROVED_EXTENSIONS.iter().find(|(v, _)| *v == version) {
            return n;
        }
        ENTRIES[..PUBLIC_ENTRIES]
            .iter()
            .filter(|e| version >= e.since)
            .count()
    }

    /// Record size of a table for a version, where the public sources or corpus establish it.
    /// A version newer than any with evidence keeps only the I/O record size (the newest
    /// known one, checked against the table size); its other tables stay opaque.
    pub fn record_size(name: &str, version: u32, nn_code: u32, tp_code: u32) -> Option<u64> {
        if Layout::of(version) == Layout::BoundedUnknown && !matches!(name, "input" | "output") {
            return None;
        }
        Some(match name {
            "input" | "output" => io_record_size(version),
            "layer" => {
                if version >= 0x0001_0008 {
                    76
                } else {
                    72
                }
            }
            // The newer public header: +preempt at 0x00010011, +abs_op_id at 0x00010017.
            "operation" => match version {
                v if v >= 0x0001_0017 => 32,
                v if v >= 0x0001_0011 => 28,
                _ => 24,
            },
            "nn" => return command_bytes(nn_code),
            "tp" => return command_bytes(tp_code),
            "sh" => {
                if version >= 0x0001_000e {
                    8
                } else {
                    4
                }
            }
            // 40-byte records are observed in every 0x00010014+ file; the gate is not public.
            "patch" => match version {
                v if v >= 0x0001_0014 => 40,
                v if v >= 0x0001_0006 => 28,
                _ => 24,
            },
            "sw" => {
                if version >= 0x0001_0009 {
                    68
                } else {
                    4
                }
            }
            "hw_init" => 12,
            "ppu_param" => 48,
            "lcd_table" | "icd_table" | "coeff_data_table" | "ppu_instr_table"
            | "dyna_io_table" | "load_states_table" => 8,
            _ => return None,
        })
    }

    /// I/O record width: 116 (six dims, name) from 0x0001000b, 108 (four dims, name) from
    /// 0x00010004, 44 (four dims, no name) before.
    pub fn io_record_size(version: u32) -> u64 {
        match version {
            v if v >= 0x0001_000b => 116,
            v if v >= 0x0001_0004 => 108,
            _ => 44,
        }
    }
}

/// Field names by offset inside fixed records, for attributing changed bytes.
pub mod fields {
    /// (offset, width, name) rows; the first row containing `offset` names it.
    pub type Table = &'static [(usize, usize, &'static str)];

    pub const V2_HEADER: Table = &[
        (0x00, 4, "magic"),
        (0x04, 4, "version"),
        (0x08, 4, "target"),
        (0x0c, 4, "crc_sum"),
        (0x10, 4, "total_size_low"),
        (0x14, 4, "total_size_high"),
        (0x18, 4, "sub_header_offset"),
        (0x1c, 4, "sub_header_size"),
        (0x20, 4, "sub_header_count"),
        (0x24, 4, "class_word"),
        (0x28, 4, "reserved2"),
        (0x2c, 4, "reserved3"),
    ];

    pub const V2_SUB_HEADER: Table = &[
        (0, 4, "section_headers_offset"),
        (4, 4, "section_header_size"),
        (8, 4, "section_header_count"),
    ];

    pub const V2_SECTION_HEADER: Table = &[
        (0x00, 4, "type"),
        (0x04, 8, "offset"),
        (0x0c, 8, "size"),
        (0x14, 8, "load_address"),
        (0x1c, 4, "alignment"),
        (0x20, 4, "entry_size"),
        (0x24, 8, "reserved_words"),
    ];

    pub const V2_IO_RECORD: Table = &[
        (0x00, 4, "dimension_count"),
        (0x04, 24, "dimensions"),
        (0x1c, 4, "data_format"),
        (0x20, 4, "data_type"),
        (0x24, 4, "quantization.format"),
        (0x28, 8, "quantization.raw_words"),
        (0x30, 64, "name"),
    ];

    pub const V2_NETWORK_INFO: Table = &[
        (0x00, 64, "name"),
        (0x40, 4, "input_count"),
        (0x44, 4, "output_count"),
        (0x48, 4, "layer_count"),
        (0x4c, 4, "absolute_operation_count"),
        (0x50, 4, "operation_count"),
        (0x54, 4, "core_count"),
        (0x58, 4, "address_width"),
        (0x5c, 4, "attribute"),
        (0x60, 124, "vsi_reserved"),
    ];

    pub const V2_CHECKSUM_RECORD: Table = &[(0, 4, "section_type"), (4, 4, "checksum_value")];
    pub const V2_DYNAIO_RECORD: Table = &[(0, 4, "offset"), (4, 4, "size")];

    pub const V1_FIXED: Table = &[
        (0x00, 4, "magic"),
        (0x04, 4, "version"),
        (0x08, 4, "target"),
        (0x0c, 64, "network_name"),
        (0x4c, 4, "layer_count"),
        (0x50, 4, "operation_count"),
        (0x54, 4, "input_count"),
        (0x58, 4, "output_count"),
        (0x5c, 4, "feature_database.bits"),
        (0x60, 4, "feature_database.num_pixel_pipes"),
        (0x64, 8, "feature_database.core_fields"),
        (0x6c, 4, "nbg_crc_sum"),
        (0x70, 4, "feature_database.vip_sram_width"),
        (0x74, 40, "feature_database.vsi_reserved"),
        (0x9c, 192, "feature_database.customer_reserved"),
        (0x15c, 12, "memory_pool"),
        (0x168, 8, "axi_sram"),
        (0x170, 8, "vip_sram"),
    ];

    /// v1 I/O record with six dimensions (116 bytes).
    pub const V1_IO_RECORD_116: Table = &[
        (0, 4, "dimension_count"),
        (4, 24, "dimensions"),
        (28, 4, "data_format"),
        (32, 4, "data_type"),
        (36, 4, "quantization.format"),
        (40, 4, "quantization.fixed_point_position"),
        (44, 4, "quantization.scale"),
        (48, 4, "quantization.zero_point"),
        (52, 64, "name"),
    ];

    /// Name of the field containing `offset`, if the table has one.
    pub fn at(table: Table, offset: u64) -> Option<&'static str> {
        table
            .iter()
            .find(|(o, w, _)| (*o as u64) <= offset && offset < (*o + *w) as u64)
            .map(|r| r.2)
    }
}

/// Layer, operation, SH-operation and patch records, shared by both families (v2 sections 3,
/// 4, 9 and 10; the v1 layer, operation, sh and patch tables). Layouts and enum values are facts
/// from the public VIPLite headers and the DWARF of the vendor's `nbinfo`.
pub mod records {
    /// `nbg_section_layer`: name[64], node id, operation count, uid (76 bytes from v1
    /// 0x00010008 and in v2).
    pub const LAYER_SIZE: u64 = 76;
    pub const LAYER_NAME_SIZE: usize = 64;
    pub const LAYER_OFF_ID: usize = 0x40;
    pub const LAYER_OFF_OPERATION_COUNT: usize = 0x44;
    pub const LAYER_OFF_UID: usize = 0x48;

    /// `nbg_section_operation`: type, index, layer id, state id, patch index, patch count
    /// (24 bytes), then the preempt/abs_share_id word (28), then abs_op_id (32; v2 and v1 from
    /// 0x00010017).
    pub const OPERATION_SIZE: u64 = 32;
    pub const OP_OFF_TYPE: usize = 0x00;
    pub const OP_OFF_INDEX: usize = 0x04;
    pub const OP_OFF_LAYER_ID: usize = 0x08;
    pub const OP_OFF_STATE_ID: usize = 0x0c;
    pub const OP_OFF_PATCH_INDEX: usize = 0x10;
    pub const OP_OFF_PATCH_COUNT: usize = 0x14;
    /// Bits 0..4 preempt, bits 4..32 abs_share_id.
    pub const OP_OFF_PREEMPT_WORD: usize = 0x18;
    pub const OP_OFF_ABS_OP_ID: usize = 0x1c;
    /// `layer_id` of the INIT and END operations, which belong to no layer.
    pub const NO_LAYER: u32 = 0xffff;

    /// `nbg_section_sh_operation`: PPU instruction-table index, PPU parameter index (v1 before
    /// 0x0001000e: the instruction index only).
    pub const SH_SIZE: u64 = 8;

    /// `nbg_section_patch_table`: type, dest offset, source type, index (signed), src offset,
    /// transformed, name (28 bytes); the 40-bit-VA variant adds dest_offset_h, src_offset_h,
    /// mask_h (40 bytes).
    pub const PATCH_SIZE: u64 = 28;
    pub const PATCH_SIZE_40BIT: u64 = 40;
    pub const PATCH_OFF_TYPE: usize = 0x00;
    pub const PATCH_OFF_DEST_OFFSET: usize = 0x04;
    pub const PATCH_OFF_SOURCE_TYPE: usize = 0x08;
    pub const PATCH_OFF_INDEX: usize = 0x0c;
    pub const PATCH_OFF_SRC_OFFSET: usize = 0x10;

    /// Public operation types (`enum _nbg_operation_type`).
    pub mod operation_type {
        pub const NONE: u32 = 0;
        pub const SH: u32 = 1;
        pub const NN: u32 = 2;
        pub const TP: u32 = 3;
        pub const SW: u32 = 4;
        pub const END: u32 = 0xfffe;
        pub const INIT: u32 = 0xffff;
        const NAMES: [&str; 9] = ["NONE", "SH", "NN", "TP", "SW", "SC", "SP", "NN_LUT", "NT"];

        pub fn name(t: u32) -> Option<&'static str> {
            match t {
                END => Some("END"),
                INIT => Some("INIT"),
                _ => NAMES.get(t as usize).copied(),
            }
        }
    }

    /// Public patch source types (`enum nbg_source_type_e`).
    pub mod source_type {
        pub const COMMAND: u32 = 0;
        pub const INPUT: u32 = 1;
        pub const OUTPUT: u32 = 2;
        pub const MEMORY_POOL: u32 = 3;
        const NAMES: [&str; 11] = [
            "COMMAND",
            "INPUT",
            "OUTPUT",
            "MEMORY_POOL",
            "AXI_SRAM",
            "MISC_DYNA_GENERIC",
            "MISC_DYNA_INPUT",
            "MISC_DYNA_OUTPUT",
            "VIP_SRAM",
            "KERNEL_BITSTREAM",
            "LAYER_DUMP_OUTPUT",
        ];

        pub fn name(t: u32) -> Option<&'static str> {
            match t {
                100 => Some("MULTIVIP_CHIPID"),
                101 => Some("MULTIVIP_SYNC_CMDS"),
                _ => NAMES.get(t as usize).copied(),
            }
        }
    }
}
