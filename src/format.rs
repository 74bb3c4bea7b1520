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
