//! The format's numbers and names, in one place.
//!
//! Limits, public enum names and per-version rules the parsers and the builders share. Record
//! layouts (offsets, widths, sizes) are defined once in `crate::nbg::fieldmap`; the layout constants
//! here are derived from it. Values come from the field map (`nbg-field-map.txt`) and the public
//! VIPLite / TIM-VX headers.

/// ASCII `VPMN`, the first four bytes of every NBG.
pub const MAGIC: [u8; 4] = *b"VPMN";

/// File offset of the version word, which selects the family (both families keep it here).
pub const OFF_VERSION_WORD: usize = v2::OFF_VERSION;
/// File offset of the target word: the same in both families' headers, and what a loader
/// selects its configuration by.
pub const OFF_TARGET_WORD: usize = v2::OFF_TARGET;
const _: () = assert!(v1::OFF_TARGET == v2::OFF_TARGET);

/// The v2 version the spec describes (the builder writes it).
pub const V2_VERSION: u32 = 0x0002_0000;

/// How a v2 version computes its header `crc_sum`; each rule is a hypothesis of the CRC
/// registry (`crc_rules`), and `nbg crc-explain` shows which one reproduces a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderCrc {
    /// The spec's recovered rule: section payloads in directory order, the section-40 value
    /// words read as zero (`v2-directory-order-payloads`).
    SectionPayloads,
    /// CRC-32 of the whole file with the four field bytes read as zero
    /// (`whole-file-field-zeroed`).
    WholeFileFieldZeroed,
}

/// What differs between the v2 versions nbg reads: one row per version, each with the
/// evidence it was measured on. Everything else (the header, sub-header, directory and record
/// layouts of `crate::nbg::fieldmap`) is shared.
#[derive(Clone, Copy, Debug)]
pub struct V2Rules {
    /// The version word.
    pub version: u32,
    /// The header CRC rule.
    pub header_crc: HeaderCrc,
    /// Where the rules were measured.
    pub evidence: &'static str,
}

/// The v2 versions nbg parses.
pub const V2_VERSIONS: [V2Rules; 2] = [
    V2Rules {
        version: V2_VERSION,
        header_crc: HeaderCrc::SectionPayloads,
        evidence: "nbg-field-map.txt: 137 stock files of one firmware (the spec's corpus); the files Allwinner's A733 toolkit wrote (../shared/corpus/v2): crc-explain finds the directory-order rule on every one (notebooks/real-v2.md)",
    },
    V2Rules {
        version: 0x0002_0005,
        header_crc: HeaderCrc::WholeFileFieldZeroed,
        evidence: "controls/serializer: files written by the vendor's simulator driver (acuitylite 6.57.1); crc-explain finds whole-file-field-zeroed on every one and the directory-order rule on none (notebooks/real-v2.md)",
    },
];

/// The rules of a v2 version nbg parses.
pub fn v2_rules(version: u32) -> Option<&'static V2Rules> {
    V2_VERSIONS.iter().find(|r| r.version == version)
}

/// A target (the header's device word) as every command names it: `0x1000003b`, the form of
/// the vendor's configuration names (`..._PID0X1000003B`).
pub fn target_hex(target: u32) -> String {
    format!("0x{target:08x}")
}

/// The v1 family: `version >> 16 == 1`.
pub const V1_MAJOR: u32 = 0x0001;

/// v2 layout numbers, derived from the field map (`crate::nbg::fieldmap`), plus the parser's limits.
pub mod v2 {
    use crate::nbg::fieldmap::{
        v2_axi_sram, v2_checksum_record, v2_dynaio_entry, v2_header as h, v2_io_record as io,
        v2_memory_pool, v2_network_info as ni, v2_section_header, v2_sub_header, v2_vip_sram,
    };

    /// Bytes of the v2 header at file offset 0.
    pub const HEADER_SIZE: usize = h::SIZE;
    /// File offset of the header's `version` word.
    pub const OFF_VERSION: usize = h::version.offset;
    /// File offset of the header's `target` word.
    pub const OFF_TARGET: usize = h::target.offset;
    /// File offset of the header's file CRC (`crc_sum`).
    pub const OFF_CRC_SUM: usize = h::crc_sum.offset;
    /// File offset of the declared file size, low word (the high word follows).
    pub const OFF_TOTAL_SIZE_LOW: usize = h::total_size_low.offset;
    /// File offset of the header's sub-header offset word.
    pub const OFF_SUB_HEADER_OFFSET: usize = h::sub_header_offset.offset;
    /// File offset of the header's sub-header size word.
    pub const OFF_SUB_HEADER_SIZE: usize = h::sub_header_size.offset;
    /// File offset of the header's sub-header count word.
    pub const OFF_SUB_HEADER_COUNT: usize = h::sub_header_count.offset;

    /// Bytes of the sub-header, which locates the section directory.
    pub const SUB_HEADER_SIZE: u32 = v2_sub_header::SIZE as u32;
    /// The parser returns one graph, so it accepts exactly one sub-header.
    pub const SUB_HEADER_COUNT: u32 = 1;

    /// Bytes of one section directory entry.
    pub const SECTION_HEADER_SIZE: u32 = v2_section_header::SIZE as u32;
    /// Reviewed bound, checked before any directory entry is read.
    pub const MAX_SECTIONS: u32 = 256;

    /// Bytes of one input or output record.
    pub const IO_RECORD_SIZE: u64 = io::SIZE as u64;
    /// Reviewed bound on the input and output records of a graph.
    pub const IO_MAX_RECORDS: u64 = 256;
    /// Dimension slots of an I/O record.
    pub const IO_MAX_DIMS: u32 = (io::dimensions.width / 4) as u32;

    /// Bytes of the network-info section (section 35).
    pub const NETWORK_INFO_SIZE: u64 = ni::SIZE as u64;

    /// Bytes of one section-40 checksum record: (section type, CRC-32) words.
    pub const CHECKSUM_RECORD_SIZE: u64 = v2_checksum_record::SIZE as u64;
    /// Bytes of one DYNAIO table entry: (offset, size) into the DYNAIO region.
    pub const DYNAIO_RECORD_SIZE: u64 = v2_dynaio_entry::SIZE as u64;
    /// Bytes of one index-table record (sections 23, 25, 27): (offset, size) into its data section.
    pub const INDEX_RECORD_SIZE: u64 = crate::nbg::fieldmap::v2_index_entry::SIZE as u64;
    /// DYNAIO entries and the region are laid out in 64-byte units.
    pub const DYNAIO_ALIGN: u64 = 64;

    /// Bytes of the memory-pool section (section 37).
    pub const MEMORY_POOL_SIZE: u64 = v2_memory_pool::SIZE as u64;
    /// Bytes of the VIP SRAM section (section 38).
    pub const VIP_SRAM_SIZE: u64 = v2_vip_sram::SIZE as u64;
    /// Bytes of the AXI SRAM section (section 39).
    pub const AXI_SRAM_SIZE: u64 = v2_axi_sram::SIZE as u64;
}

/// The runtime copies the final 512 bytes of a graph into its model object.
pub const CONNECTION_REGION_SIZE: u64 = 512;

/// Largest derived tensor storage the parser accepts (1 TiB).
pub const MAX_TENSOR_STORAGE: u64 = 1 << 40;

/// Public v2 section IDs (`NBG_SECTION_*`); the enum is append-only and 0..=40 are named.
pub mod section {
    /// `NBG_SECTION_NONE`.
    pub const NONE: u32 = 0;
    /// `NBG_SECTION_INPUT`: the input records.
    pub const INPUT: u32 = 1;
    /// `NBG_SECTION_OUTPUT`: the output records.
    pub const OUTPUT: u32 = 2;
    /// `NBG_SECTION_LAYER`: the layer records.
    pub const LAYER: u32 = 3;
    /// `NBG_SECTION_OPERATIONS`: the operation records.
    pub const OPERATIONS: u32 = 4;
    /// `NBG_SECTION_COEF_HEADER_TABLE`: (offset, size) records into COEF_HEADER.
    pub const COEF_HEADER_TABLE: u32 = 5;
    /// `NBG_SECTION_COEF_HEADER`: coefficient headers (64 bytes each where measured).
    pub const COEF_HEADER: u32 = 6;
    /// `NBG_SECTION_NN`: NN engine commands.
    pub const NN: u32 = 7;
    /// `NBG_SECTION_TP`: TP engine commands.
    pub const TP: u32 = 8;
    /// `NBG_SECTION_SH`: the SH operation records.
    pub const SH: u32 = 9;
    /// `NBG_SECTION_PATCH`: the patch records.
    pub const PATCH: u32 = 10;
    /// `NBG_SECTION_HWINITOPERATIONS`: the hardware-init operation records.
    pub const HWINITOPERATIONS: u32 = 13;
    /// `NBG_SECTION_ICDT`: (offset, size) records into ICD.
    pub const ICDT: u32 = 14;
    /// `NBG_SECTION_ICD`: the initial command data the hardware-init operations load.
    pub const ICD: u32 = 15;
    /// `NBG_SECTION_PPU_INSTR`: shader instructions.
    pub const PPU_INSTR: u32 = 19;
    /// `NBG_SECTION_DYNAIO`: the DYNAIO region.
    pub const DYNAIO: u32 = 20;
    /// `NBG_SECTION_LOADSTATE`: state buffers.
    pub const LOADSTATE: u32 = 21;
    /// `NBG_SECTION_COEF_DATA_TABLE`.
    pub const COEF_DATA_TABLE: u32 = 23;
    /// `NBG_SECTION_COEF_DATA`: coefficients (weights).
    pub const COEF_DATA: u32 = 24;
    /// `NBG_SECTION_PPU_INSTR_TABLE`.
    pub const PPU_INSTR_TABLE: u32 = 25;
    /// `NBG_SECTION_DYNAIO_TABLE`: (offset, size) entries into the DYNAIO region.
    pub const DYNAIO_TABLE: u32 = 26;
    /// `NBG_SECTION_LOADSTATE_TABLE`.
    pub const LOADSTATE_TABLE: u32 = 27;
    /// `NBG_SECTION_NETWORK_INFO`: name, counts and attributes.
    pub const NETWORK_INFO: u32 = 35;
    /// `NBG_SECTION_MEMORY_POOL`: the memory pool's used size.
    pub const MEMORY_POOL: u32 = 37;
    /// `NBG_SECTION_VIP_SRAM`: the VIP SRAM's used size.
    pub const VIP_SRAM: u32 = 38;
    /// `NBG_SECTION_AXI_SRAM`: the AXI SRAM's used size.
    pub const AXI_SRAM: u32 = 39;
    /// `NBG_SECTION_CHECKSUM`: per-section CRC-32 records.
    pub const CHECKSUM: u32 = 40;
    /// The highest named section ID.
    pub const MAX_ID: u32 = 40;

    /// The data section an index table's (offset, size) records point into.
    pub fn indexed_by(table: u32) -> Option<u32> {
        match table {
            ICDT => Some(ICD),
            COEF_DATA_TABLE => Some(COEF_DATA),
            COEF_HEADER_TABLE => Some(COEF_HEADER),
            PPU_INSTR_TABLE => Some(PPU_INSTR),
            LOADSTATE_TABLE => Some(LOADSTATE),
            _ => None,
        }
    }

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

    /// What the bytes of each section ID are, by ID (`content`). v1 entry k holds what section
    /// type k + 1 holds, so one table serves both families.
    const CONTENTS: [super::Content; 41] = {
        use super::Content::*;
        [
            Other,            // NONE
            IoMetadata,       // INPUT
            IoMetadata,       // OUTPUT
            GraphRecords,     // LAYER
            GraphRecords,     // OPERATIONS
            Coefficients,     // COEF_HEADER_TABLE (v1 lcd_table)
            Coefficients,     // COEF_HEADER (v1 lcd)
            Commands,         // NN
            Commands,         // TP
            GraphRecords,     // SH
            StatesAndPatches, // PATCH
            GraphRecords,     // LAYER_PARAM
            GraphRecords,     // SW
            GraphRecords,     // HWINITOPERATIONS
            Commands,         // ICDT (initial command data table)
            Commands,         // ICD
            GraphRecords,     // PPU_PARAM
            GraphRecords,     // OPSYNC
            GraphRecords,     // DMA_SBI_INFO
            Commands,         // PPU_INSTR
            StatesAndPatches, // DYNAIO
            StatesAndPatches, // LOADSTATE
            GraphRecords,     // DMA_SBI_ADDITION
            Coefficients,     // COEF_DATA_TABLE
            Coefficients,     // COEF_DATA
            Commands,         // PPU_INSTR_TABLE
            StatesAndPatches, // DYNAIO_TABLE
            StatesAndPatches, // LOADSTATE_TABLE
            GraphRecords,     // LAYER_DUMP_OPERATION
            GraphRecords,     // LAYER_DUMP_OUTPUTS
            StatesAndPatches, // LAYER_DUMP_PATCH_DATA
            Commands,         // LAYER_DUMP_INSTR_TABLE
            Commands,         // LAYER_DUMP_INSTR
            StatesAndPatches, // LAYER_DUMP_LOADSTATE_TABLE
            StatesAndPatches, // LAYER_DUMP_LOADSTATE
            Structure,        // NETWORK_INFO
            Other,            // CUSTOMER_DATA
            Structure,        // MEMORY_POOL
            Structure,        // VIP_SRAM
            Structure,        // AXI_SRAM
            Structure,        // CHECKSUM
        ]
    };

    /// What a section of type `id` holds; `Other` outside 0..=40.
    pub fn content(id: u32) -> super::Content {
        CONTENTS
            .get(id as usize)
            .copied()
            .unwrap_or(super::Content::Other)
    }
}

/// What a file's bytes are, for a size breakdown (`nbg info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Content {
    /// NN, TP and shader command streams, initial commands and their index tables.
    Commands,
    /// Coefficients (weights, biases) and their headers and index tables.
    Coefficients,
    /// Load states, patches and the DYNAIO region: what the runtime rewrites or replays.
    StatesAndPatches,
    /// Input and output records.
    IoMetadata,
    /// Layer, operation and other per-operation records.
    GraphRecords,
    /// Headers, the directory or fixed part, network info and memory records, checksums.
    Structure,
    /// Alignment and padding between and after the owned ranges.
    Padding,
    /// Anything else: undeclared extensions and unnamed sections.
    Other,
}

crate::canonical::names! {
    Content {
        Commands => "commands",
        Coefficients => "coefficients",
        StatesAndPatches => "states-and-patches",
        IoMetadata => "io-metadata",
        GraphRecords => "graph-records",
        Structure => "structure",
        Padding => "padding",
        Other => "other",
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
    /// Public name of a buffer data type, `None` when unknown.
    pub fn name(id: u32) -> Option<&'static str> {
        NAMES.get(id as usize).copied()
    }
}

/// Public quantization formats (`vip_buffer_quantize_format_e`).
pub mod quantization {
    /// No quantization.
    pub const NONE: u32 = 0;
    /// Dynamic fixed point: a fixed-point position.
    pub const DYNAMIC_FIXED_POINT: u32 = 1;
    /// Affine asymmetric: a scale and a zero point.
    pub const AFFINE_ASYMMETRIC: u32 = 2;
    const NAMES: [&str; 3] = ["NONE", "DYNAMIC_FIXED_POINT", "AFFINE_ASYMMETRIC"];
    /// Public name of a quantization format, `None` when unknown.
    pub fn name(id: u32) -> Option<&'static str> {
        NAMES.get(id as usize).copied()
    }
}

/// Network-info attribute bitfield: the parts come from the field map; command-size codes map
/// to bytes where the header says so.
pub mod attribute {
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
    /// Newest version the vendor's reader knows: `nbinfo` accepts every v1 version up to this
    /// one (`nbg_parser_init` compares the version word with it) and refuses newer ones. Newer
    /// versions of the family still parse when their fixed part can be bounded
    /// (`Layout::BoundedUnknown`).
    pub const MAX_KNOWN_VERSION: u32 = 0x0001_0020;

    /// How much of a version's fixed part the project knows.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Layout {
        /// A version up to `MAX_KNOWN_VERSION`: every entry and record field gated by the
        /// version it appears from.
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

    use crate::nbg::fieldmap::v1_fixed as fx;
    /// File offset of the fixed part's `target` word.
    pub const OFF_TARGET: usize = fx::target.offset;
    /// File offset of the network name field.
    pub const OFF_NETWORK_NAME: usize = fx::network_name.offset;
    /// File offset of the declared layer count.
    pub const OFF_LAYER_COUNT: usize = fx::layer_count.offset;
    /// File offset of the declared operation count.
    pub const OFF_OPERATION_COUNT: usize = fx::operation_count.offset;
    /// File offset of the declared input count.
    pub const OFF_INPUT_COUNT: usize = fx::input_count.offset;
    /// File offset of the declared output count.
    pub const OFF_OUTPUT_COUNT: usize = fx::output_count.offset;
    /// 256-byte feature database, from 0x00010003.
    pub const FEATURE_DB: usize = fx::feature_bits.offset;
    /// `nbg_crc_sum` in the newer public VIPLite v1 header.
    pub const OFF_CRC: usize = fx::nbg_crc_sum.offset;
    /// Memory pool (size, alignment, base) and AXI SRAM (base, size) follow the feature database.
    pub const OFF_MEMORY_POOL: usize = fx::memory_pool.offset;
    /// VIP SRAM (base, size), from 0x00010008.
    pub const VIP_SRAM_SINCE: u32 = fx::vip_sram.since;

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
        /// Beyond that layout; read by the vendor's reader `nbinfo` from the version its v1
        /// reader gates it on (`nbg_fmt_read_fixed`), named as its DWARF names it, and bounds and
        /// semantics consistent across every public file of a version that has it.
        Proved,
        /// Beyond that layout; read by the vendor's reader from the version its v1 reader gates
        /// it on and named as it names it, but empty (or absent) in every public file.
        VendorReader,
    }

    impl Evidence {
        /// The name used in reports (`public`, `proved`, `vendor-reader`).
        pub fn as_str(self) -> &'static str {
            match self {
                Evidence::Public => "public",
                Evidence::Proved => "proved",
                Evidence::VendorReader => "vendor-reader",
            }
        }
    }

    /// An (offset, size) entry of the fixed part: its name, the version it appears from, and
    /// the table it nests into (entries relative to that table's data).
    #[derive(Clone, Copy, Debug)]
    pub struct Entry {
        /// The entry's (and its table's) name.
        pub name: &'static str,
        /// First v1 version with the entry (0: always).
        pub since: u32,
        /// How far the entry is established.
        pub evidence: Evidence,
        /// The table whose data this entry's (offset, size) pairs point into, if any.
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

    /// The entries in on-disk order; entry k is v2 section type k + 1 up to `load_states_table`.
    /// Each `since` is the gate of the vendor reader's `nbg_fmt_read_fixed` (the compared
    /// constants are in `notebooks/v1-public-corpus.md`); the public 16 agree with TIM-VX.
    pub const ENTRIES: [Entry; 34] = [
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
        e("op_sync", 0x0001_000f, Evidence::VendorReader, None),
        e("dma_sbi_info", 0x0001_0013, Evidence::VendorReader, None),
        e("ppu_instr", 0x0001_0018, Evidence::Proved, None),
        e("dyna_io", 0x0001_0018, Evidence::Proved, None),
        e("load_states", 0x0001_0018, Evidence::Proved, None),
        e(
            "dma_sbi_addition",
            0x0001_001b,
            Evidence::VendorReader,
            None,
        ),
        e(
            "coeff_data_table",
            0x0001_001c,
            Evidence::Proved,
            Some("coeff_data"),
        ),
        e("coeff_data", 0x0001_001c, Evidence::Proved, None),
        e(
            "ppu_instr_table",
            0x0001_001c,
            Evidence::Proved,
            Some("ppu_instr"),
        ),
        e(
            "dyna_io_table",
            0x0001_001c,
            Evidence::Proved,
            Some("dyna_io"),
        ),
        e(
            "load_states_table",
            0x0001_001c,
            Evidence::Proved,
            Some("load_states"),
        ),
        // The layer-dump entries: no public file has them, so their payloads stay opaque and
        // no nesting is assumed.
        e("ldump_operation", 0x0001_0020, Evidence::VendorReader, None),
        e("ldump_outputs", 0x0001_0020, Evidence::VendorReader, None),
        e(
            "ldump_patch_data",
            0x0001_0020,
            Evidence::VendorReader,
            None,
        ),
        e(
            "ldump_instr_table",
            0x0001_0020,
            Evidence::VendorReader,
            None,
        ),
        e("ldump_instr", 0x0001_0020, Evidence::VendorReader, None),
        e(
            "ldump_load_states_table",
            0x0001_0020,
            Evidence::VendorReader,
            None,
        ),
        e(
            "ldump_load_states",
            0x0001_0020,
            Evidence::VendorReader,
            None,
        ),
    ];

    const fn gates_ascend() -> bool {
        let mut i = 1;
        while i < ENTRIES.len() {
            if ENTRIES[i].since < ENTRIES[i - 1].since {
                return false;
            }
            i += 1;
        }
        true
    }
    // A version's entries are a prefix of `ENTRIES` (what `entry_count` counts).
    const _: () = assert!(gates_ascend());

    /// Entries of the public layout (TIM-VX reads these); a version newer than
    /// `MAX_KNOWN_VERSION` reads only these.
    pub const PUBLIC_ENTRIES: usize = 16;

    /// Versions a public file proves: one of the version parses, its layer, operation, SH,
    /// patch and other decoded records re-encode exactly, and the vendor's reader agrees on
    /// every field both print (`tests/integration/vendor_reader.rs`, `v1_corpus.rs`). Every other
    /// known version's layout rests on the vendor reader's gates alone.
    pub const PROVED_VERSIONS: [u32; 7] = [
        0x0001_0009,
        0x0001_000c,
        0x0001_000e,
        0x0001_000f,
        0x0001_0014,
        0x0001_0016,
        0x0001_001e,
    ];

    /// Where a version's layout comes from.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum LayoutEvidence {
        /// One of `PROVED_VERSIONS`.
        Proved,
        /// Another known version: the vendor reader's gates alone.
        VendorReader,
        /// Newer than `MAX_KNOWN_VERSION`.
        BoundedUnknown,
    }

    crate::canonical::names! {
        LayoutEvidence {
            Proved => "proved",
            VendorReader => "vendor-reader",
            BoundedUnknown => "bounded-unknown",
        }
    }

    /// The evidence of a version's layout.
    pub fn layout_evidence(version: u32) -> LayoutEvidence {
        if Layout::of(version) == Layout::BoundedUnknown {
            LayoutEvidence::BoundedUnknown
        } else if PROVED_VERSIONS.contains(&version) {
            LayoutEvidence::Proved
        } else {
            LayoutEvidence::VendorReader
        }
    }

    /// Offset of entry 0 for a version (the fixed header shrinks before 0x00010008).
    pub fn entries_offset(version: u32) -> usize {
        fx::RECORD.size_at(version)
    }

    /// Number of (offset, size) entries the parser decodes for a version: every entry gated
    /// at or below a known version, the public ones for a newer version.
    pub fn entry_count(version: u32) -> usize {
        let known = Layout::of(version) == Layout::Known;
        ENTRIES
            .iter()
            .enumerate()
            .filter(|(i, e)| version >= e.since && (known || *i < PUBLIC_ENTRIES))
            .count()
    }

    /// First v1 version whose patch records are 40 bytes: the vendor reader's gate, proved by
    /// every public 0x00010014+ file.
    pub const PATCH_40BIT_SINCE: u32 = 0x0001_0014;

    /// I/O record width: 116 (six dims, name) from 0x0001000b, 108 (four dims, name) from
    /// 0x00010004, 44 (four dims, no name) before.
    pub fn io_record_size(version: u32) -> u64 {
        io_record(version).size as u64
    }

    /// The field-map I/O record of a version.
    pub fn io_record(version: u32) -> crate::nbg::fieldmap::Record {
        use crate::nbg::fieldmap as fm;
        match version {
            v if v >= 0x0001_000b => fm::v1_io_record::RECORD,
            v if v >= 0x0001_0004 => fm::v1_io_record_108::RECORD,
            _ => fm::v1_io_record_44::RECORD,
        }
    }
}

/// Layer, operation, SH-operation and patch records, shared by both families (v2 sections 3,
/// 4, 9 and 10; the v1 layer, operation, sh and patch tables). Layouts and enum values are facts
/// from the public VIPLite headers and the DWARF of the vendor's `nbinfo`.
pub mod records {
    /// `layer_id` the builder writes for the INIT and END operations, which belong to no layer
    /// (the spec's corpus's value).
    pub const NO_LAYER: u32 = 0xffff;
    /// Every `layer_id` that means "no layer" on an INIT or END operation. Two producers of the
    /// same versions wrote two sentinels: 0xffff (the spec's 137 stock 0x00020000 files, the
    /// public v1 files) and 0xffffffff (Allwinner's A733 toolkit, 0x00020000 and 0x00010020;
    /// the simulator driver's 0x00020005). nbinfo prints either as the layer index unchecked.
    pub const NO_LAYER_IDS: [u32; 2] = [NO_LAYER, 0xffff_ffff];

    /// Public operation types (`enum _nbg_operation_type`).
    pub mod operation_type {
        /// `NONE`.
        pub const NONE: u32 = 0;
        /// A shader (SH) operation.
        pub const SH: u32 = 1;
        /// An NN engine operation.
        pub const NN: u32 = 2;
        /// A TP engine operation.
        pub const TP: u32 = 3;
        /// A software (CPU) operation.
        pub const SW: u32 = 4;
        /// A stream-processor operation; runs on the NN engine.
        pub const SP: u32 = 6;
        /// An NN operation with a lookup table.
        pub const NN_LUT: u32 = 7;
        /// An NT operation; runs on the NN engine.
        pub const NT: u32 = 8;
        /// The closing operation.
        pub const END: u32 = 0xfffe;
        /// The initialising operation.
        pub const INIT: u32 = 0xffff;
        const NAMES: [&str; 9] = ["NONE", "SH", "NN", "TP", "SW", "SC", "SP", "NN_LUT", "NT"];

        /// Whether the type runs on the NN engine and indexes the NN command records: NN, SP,
        /// NN_LUT and NT, as the vendor reader's `nbg_operation_is_nn_engine` groups them
        /// (types 2 and 6..=8; its disassembly, notebooks/vendor-reader.md).
        pub fn is_nn_engine(t: u32) -> bool {
            matches!(t, NN | SP | NN_LUT | NT)
        }

        /// Public name of an operation type, `None` when unknown.
        pub fn name(t: u32) -> Option<&'static str> {
            match t {
                END => Some("END"),
                INIT => Some("INIT"),
                _ => NAMES.get(t as usize).copied(),
            }
        }
    }

    /// Public SW operation types (the VIPLite runtime's `sw_operation_type_e`).
    pub mod sw_operation_type {
        const NAMES: [&str; 4] = ["NONE", "RPN", "USER_CPU", "RPN_SORT_NMS"];

        /// Public name of an SW operation type, `None` when unknown.
        pub fn name(t: u32) -> Option<&'static str> {
            NAMES.get(t as usize).copied()
        }
    }

    /// Public patch source types (`enum nbg_source_type_e`).
    pub mod source_type {
        /// The command buffer.
        pub const COMMAND: u32 = 0;
        /// An input of the graph.
        pub const INPUT: u32 = 1;
        /// An output of the graph.
        pub const OUTPUT: u32 = 2;
        /// The memory pool.
        pub const MEMORY_POOL: u32 = 3;
        /// The AXI SRAM.
        pub const AXI_SRAM: u32 = 4;
        /// An entry of the loading-config (v1 `lcd_table`) or coefficient table: weights,
        /// lookup tables, shader data.
        pub const MISC_DYNA_GENERIC: u32 = 5;
        /// An entry of the same table holding a temporary input.
        pub const MISC_DYNA_INPUT: u32 = 6;
        /// An entry of the same table holding a temporary output.
        pub const MISC_DYNA_OUTPUT: u32 = 7;
        /// The VIP SRAM.
        pub const VIP_SRAM: u32 = 8;
        /// "patch kernel's bit stream": an entry of the coefficient header table (v2
        /// COEF_HEADER_TABLE into COEF_HEADER), measured on the simulator (`notebooks/commands.md`,
        /// "Patches resolved").
        pub const KERNEL_BITSTREAM: u32 = 9;
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

        /// Public name of a patch source type, `None` when unknown.
        pub fn name(t: u32) -> Option<&'static str> {
            match t {
                100 => Some("MULTIVIP_CHIPID"),
                101 => Some("MULTIVIP_SYNC_CMDS"),
                _ => NAMES.get(t as usize).copied(),
            }
        }
    }
}
