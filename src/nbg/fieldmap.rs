//! The field map as data: every on-disk record of both NBG families, defined once.
//!
//! Each record is a static table of fields (name, offset, width, type, endianness, evidence
//! level, the v1 version a field appears from, bit parts, element names), written once with the
//! `record!` macro below. The parser reads through it (`View`), the synthetic builders write
//! through it (`Writer`), `nbg diff`, `nbg sweep`, `nbg image` and `nbg report` name bytes from
//! it, the round trip re-encodes decoded values through it, and `nbg fieldmap` exports it as
//! JSON, Kaitai Struct and Markdown.
//!
//! Why a declarative table and not `#[repr(C)]` layouts with a checked read layer (gimli-rs
//! `object`) or a binrw-style derive: the lab's job is proving field mappings, so the map must
//! exist at run time as data (exported, diffed, attributed, cross-checked by a Kaitai consumer)
//! and carry per-field evidence and version gates, which neither a struct layout nor a derive
//! keeps. One record here also serves several on-disk sizes (the v1 operation record is 24, 28
//! or 32 bytes by version), which a fixed `#[repr(C)]` struct cannot express. The macro
//! generates a typed constant per field (`v2_header::crc_sum`), so code that reads or writes a
//! field names it at compile time and a typo does not build; `layout_ok` proves at compile time
//! that each table is contiguous, non-overlapping and exactly covers its record.

/// The NBG family of a graph (or the family a mapping of the registry is written for, or a
/// record of the field map belongs to).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Version 0x0001xxxx: a fixed part and an entry table of 8-byte (offset, size) pairs.
    V1,
    /// Version 0x00020000: a header, a sub-header and a section directory.
    V2,
}

impl Family {
    /// The name used in documents and exports (`v1`, `v2`).
    pub fn as_str(self) -> &'static str {
        match self {
            Family::V1 => "v1",
            Family::V2 => "v2",
        }
    }
}

/// How far a field's meaning is established.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// A public header names it.
    Public,
    /// Corpus or differential evidence establishes it.
    Proved,
    /// Plausible, not yet uniquely established.
    Inferred,
    /// Reserved (by the format or the vendor): kept and re-encoded, never interpreted.
    Reserved,
    /// No public source names it and no measurement has: named by its word and bit range,
    /// kept and re-encoded, never guessed.
    Unknown,
}

impl Evidence {
    /// The name used in the exports.
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Public => "public",
            Evidence::Proved => "proved",
            Evidence::Inferred => "inferred",
            Evidence::Reserved => "reserved",
            Evidence::Unknown => "unknown",
        }
    }
}

/// Field value types; every multi-byte integer is little-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// One byte.
    U8,
    /// Little-endian u32.
    U32,
    /// Little-endian i32.
    I32,
    /// Two little-endian words, low then high (the same bytes as a little-endian u64).
    U64,
    /// `width / 4` consecutive little-endian u32 words.
    U32s,
    /// A NUL-terminated string in a fixed `width`-byte field.
    Str,
    /// ASCII magic.
    Magic,
    /// Bytes kept whole, never interpreted.
    Bytes,
}

impl Type {
    /// The Kaitai Struct type name.
    pub fn as_str(self) -> &'static str {
        match self {
            Type::U8 => "u1",
            Type::U32 => "u4",
            Type::I32 => "s4",
            Type::U64 => "u8",
            Type::U32s => "u4[]",
            Type::Str => "strz",
            Type::Magic => "magic",
            Type::Bytes => "bytes",
        }
    }
}

/// A bit range of an integer field (LSB first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// The part's name.
    pub name: &'static str,
    /// Position of the lowest bit.
    pub shift: u32,
    /// Width in bits.
    pub bits: u32,
    /// How far its meaning is established.
    pub evidence: Evidence,
}

impl Part {
    /// The part's bits, unshifted.
    pub fn mask(&self) -> u64 {
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }

    /// The part's value inside the field value `raw`.
    pub fn get(&self, raw: u64) -> u64 {
        (raw >> self.shift) & self.mask()
    }

    /// The part's value as `T` (a part of at most `T`'s width; a wider value saturates to
    /// `T::MAX`, which the record's layout checks rule out).
    pub fn get_as<T: TryFrom<u64> + Bounded>(&self, raw: u64) -> T {
        T::try_from(self.get(raw)).unwrap_or(T::MAX)
    }
}

/// A family as the field map's exports name it; `None` (both families) is `both`.
pub fn export_name(family: Option<Family>) -> &'static str {
    family.map_or("both", Family::as_str)
}

/// One bit part of one record field as a typed constant (`nn::word0::kernel_xy_size`, which
/// `record!` defines beside the field): every read of a part in the library goes through one, so
/// a misspelt or moved part fails to compile instead of reading the wrong bits.
#[derive(Clone, Copy, Debug)]
pub struct BitPart {
    /// The field the part lies in.
    pub field: &'static Field,
    /// Its place in the field.
    pub part: Part,
}

impl BitPart {
    /// The part's value inside the field value `raw`.
    pub fn get(&self, raw: u64) -> u64 {
        self.part.get(raw)
    }

    /// The part's value as `T` (`Part::get_as`).
    pub fn get_as<T: TryFrom<u64> + Bounded>(&self, raw: u64) -> T {
        self.part.get_as(raw)
    }

    /// The part's value in a record held as 32-bit words (a command): in the word holding the
    /// field, 0 where the record is too short to hold it (an older generation's shorter form).
    pub fn read(&self, words: &[u32]) -> u64 {
        let word = words.get(self.field.offset / 4).copied().unwrap_or(0);
        self.get(u64::from(word))
    }
}

/// An unsigned integer type's largest value, for `Part::get_as`.
pub trait Bounded {
    /// The largest value.
    const MAX: Self;
}

impl Bounded for u8 {
    const MAX: u8 = u8::MAX;
}

impl Bounded for u16 {
    const MAX: u16 = u16::MAX;
}

impl Bounded for u32 {
    const MAX: u32 = u32::MAX;
}

/// One field of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The field's name in the exports and in mismatch reports.
    pub name: &'static str,
    /// Offset from the start of the record, in bytes.
    pub offset: usize,
    /// Width in bytes.
    pub width: usize,
    /// How the bytes are read.
    pub ty: Type,
    /// How far its meaning is established.
    pub evidence: Evidence,
    /// v1 version the field appears from (0: always). A record read for an older version ends
    /// before the first field it does not have.
    pub since: u32,
    /// Bit parts of an integer field.
    pub parts: &'static [Part],
    /// Names of the words of a `U32s` field, where the public header names them.
    pub elements: &'static [&'static str],
}

impl Field {
    /// One past the field's last byte, record-relative.
    pub fn end(&self) -> usize {
        self.offset + self.width
    }

    /// Whether record-relative byte `rel` is inside the field.
    pub fn contains(&self, rel: u64) -> bool {
        (self.offset as u64) <= rel && rel < self.end() as u64
    }

    /// The bit part called `name` (a name a registry gives, such as a mapping's place; the
    /// library's own reads use the typed constants).
    pub fn part(&self, name: &str) -> Option<&'static Part> {
        self.parts.iter().find(|p| p.name == name)
    }

    /// Pack bit-part values into the raw integer; `None` when a value does not fit its part.
    pub fn pack(&self, values: &[u64]) -> Option<u64> {
        let mut raw = 0u64;
        for (p, &v) in self.parts.iter().zip(values) {
            if v & !p.mask() != 0 {
                return None;
            }
            raw |= v << p.shift;
        }
        Some(raw)
    }
}

/// One record layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Stable id (`v2.header`, `operation`, `v1.fixed`).
    pub id: &'static str,
    /// The family the record belongs to; `None` for the records both families share (layer,
    /// operation, SH, patch).
    pub family: Option<Family>,
    /// The public structure it corresponds to, or a description where none is public.
    pub public_name: &'static str,
    /// Full size (the newest version's, for version-gated records).
    pub size: usize,
    /// The fields in offset order, covering the record without gaps.
    pub fields: &'static [Field],
    /// The record this one repeats the first words of (another generation's shorter form):
    /// a proof measured on the base does not carry over (`Record::evidence`).
    pub base: Option<&'static str>,
}

impl Record {
    /// The record's family as the exports name it (`v1`, `v2`, `both`).
    pub fn family_name(&self) -> &'static str {
        export_name(self.family)
    }

    /// Whether the record belongs in the export of `family` (`None`: every record).
    pub fn in_export(&self, family: Option<Family>) -> bool {
        family.is_none() || self.family.is_none() || self.family == family
    }

    /// A field's or part's evidence as this record holds it: a `Proved` label repeated from
    /// the base record is only `Inferred` here, since the capture sets proved it on the base's
    /// generation.
    pub fn evidence(&self, e: Evidence) -> Evidence {
        match (self.base, e) {
            (Some(_), Evidence::Proved) => Evidence::Inferred,
            _ => e,
        }
    }

    /// The field containing record-relative byte `rel`.
    pub fn field_at(&self, rel: u64) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.contains(rel))
    }

    /// The field called `name` (a name a registry or an export gives; the library's own reads use
    /// the typed constants).
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The bit part called `name` and the field holding it: for parts a registry or a proof names
    /// across several layouts (the library's own reads use the typed constants).
    pub fn part(&self, name: &str) -> Option<(&'static Field, &'static Part)> {
        self.fields.iter().find_map(|f| Some((f, f.part(name)?)))
    }

    /// Size of the record for a v1 version: up to the first field the version does not have.
    pub fn size_at(&self, version: u32) -> usize {
        self.fields
            .iter()
            .find(|f| f.since > version)
            .map_or(self.size, |f| f.offset)
    }

    /// Whether the record's full layout at some version has exactly `size` bytes.
    pub fn has_size(&self, size: usize) -> bool {
        size == self.size || self.fields.iter().any(|f| f.since > 0 && f.offset == size)
    }
}

/// Compile-time proof that a table is sorted, contiguous, non-overlapping and covers `size`;
/// that integer widths match their types; and that bit parts lie inside their field.
pub const fn layout_ok(fields: &[Field], size: usize) -> bool {
    let mut at = 0;
    let mut i = 0;
    while i < fields.len() {
        let f = &fields[i];
        if f.offset != at || f.width == 0 {
            return false;
        }
        let width_ok = match f.ty {
            Type::U8 => f.width == 1,
            Type::U32 | Type::I32 => f.width == 4,
            Type::U64 => f.width == 8,
            Type::U32s => f.width % 4 == 0,
            Type::Magic => f.width == 4,
            Type::Str | Type::Bytes => true,
        };
        if !width_ok {
            return false;
        }
        let mut p = 0;
        let mut bit = 0;
        while p < f.parts.len() {
            let part = &f.parts[p];
            if part.shift != bit || part.bits == 0 {
                return false;
            }
            bit += part.bits;
            p += 1;
        }
        if !f.parts.is_empty() && bit as usize != 8 * f.width {
            return false;
        }
        at += f.width;
        i += 1;
    }
    at == size
}

macro_rules! pick {
    ($default:expr) => {
        $default
    };
    ($default:expr, $given:expr) => {
        $given
    };
}

/// A record's family in `record!`: `Both` is the records both families share.
macro_rules! family {
    (Both) => {
        None
    };
    ($family:ident) => {
        Some(crate::nbg::fieldmap::Family::$family)
    };
}

/// `record! { module: "id", Family, "public name", size; field [as "name"] @ offset, width,
/// Type, Evidence [, since V] [, parts [name: shift, bits, Evidence; ..]] [, elements [..]];
/// ... }` defines a module with one typed constant per field, a module of `BitPart` constants
/// per field with parts, `SIZE` and `RECORD`, and proves the layout at compile time.
macro_rules! record {
    ($(#[$doc:meta])* $module:ident: $id:literal, $family:ident, $public:literal, $size:expr;
     $($field:ident $(as $alias:literal)? @ $off:expr, $width:expr, $ty:ident, $ev:ident
       $(, since $since:expr)?
       $(, parts [$($pname:ident : $pshift:expr, $pbits:expr, $pev:ident);* $(;)?])?
       $(, elements [$($elem:literal),* $(,)?])?
     ;)*) => {
        $(#[$doc])*
        #[allow(non_upper_case_globals)]
        pub mod $module {
            use super::{Evidence, Field, Record, Type};
            $(
                #[doc = concat!("Field `", stringify!($field), "`: ", stringify!($width), " bytes at record offset ", stringify!($off), ".")]
                pub const $field: Field = Field {
                    name: pick!(stringify!($field) $(, $alias)?),
                    offset: $off,
                    width: $width,
                    ty: Type::$ty,
                    evidence: Evidence::$ev,
                    since: pick!(0 $(, $since)?),
                    parts: &[$($(super::Part {
                        name: stringify!($pname),
                        shift: $pshift,
                        bits: $pbits,
                        evidence: Evidence::$pev,
                    }),*)?],
                    elements: &[$($($elem),*)?],
                };
                $(
                    #[doc = concat!("The bit parts of `", stringify!($field), "`, one typed constant each.")]
                    pub mod $field {
                        $(
                            #[doc = concat!("`", stringify!($pname), "`: ", stringify!($pbits), " bits from bit ", stringify!($pshift), " of `", stringify!($field), "`.")]
                            pub const $pname: crate::nbg::fieldmap::BitPart = crate::nbg::fieldmap::BitPart {
                                field: &crate::nbg::fieldmap::$module::$field,
                                part: crate::nbg::fieldmap::Part {
                                    name: stringify!($pname),
                                    shift: $pshift,
                                    bits: $pbits,
                                    evidence: crate::nbg::fieldmap::Evidence::$pev,
                                },
                            };
                        )*
                    }
                )?
            )*
            /// Full record size in bytes.
            pub const SIZE: usize = $size;
            /// The record layout, its fields in offset order.
            pub const RECORD: Record = Record {
                id: $id,
                family: family!($family),
                public_name: $public,
                size: $size,
                fields: &[$($field),*],
                base: None,
            };
            const _: () = assert!(super::layout_ok(RECORD.fields, SIZE));
        }
    };
}

record! {
    /// v2 `nbg_format_header_t`.
    v2_header: "v2.header", V2, "nbg_format_header_t", 48;
    magic @ 0x00, 4, Magic, Public;
    version @ 0x04, 4, U32, Public;
    target @ 0x08, 4, U32, Public;
    crc_sum @ 0x0c, 4, U32, Public;
    total_size_low @ 0x10, 4, U32, Public;
    total_size_high @ 0x14, 4, U32, Public;
    sub_header_offset @ 0x18, 4, U32, Public;
    sub_header_size @ 0x1c, 4, U32, Public;
    sub_header_count @ 0x20, 4, U32, Public;
    class_word @ 0x24, 4, U32, Public, parts [class: 0, 1, Public; reserved1: 1, 31, Reserved];
    reserved2 @ 0x28, 4, U32, Reserved;
    reserved3 @ 0x2c, 4, U32, Reserved;
}

record! {
    /// v2 `nbg_sub_header_t`.
    v2_sub_header: "v2.sub_header", V2, "nbg_sub_header_t", 12;
    section_headers_offset @ 0, 4, U32, Public;
    section_header_size @ 4, 4, U32, Public;
    section_header_count @ 8, 4, U32, Public;
}

record! {
    /// v2 `nbg_section_header_t`: 64-bit quantities as low/high word pairs.
    v2_section_header: "v2.section_header", V2, "nbg_section_header_t", 44;
    kind as "type" @ 0x00, 4, U32, Public;
    offset @ 0x04, 8, U64, Public;
    size @ 0x0c, 8, U64, Public;
    load_address @ 0x14, 8, U64, Public;
    alignment @ 0x1c, 4, U32, Public;
    entry_size @ 0x20, 4, U32, Public;
    reserved_words @ 0x24, 8, U32s, Reserved, elements ["reserved1", "reserved2"];
}

record! {
    /// v2 `nbg_section_input_output_t`.
    v2_io_record: "v2.io_record", V2, "nbg_section_input_output_t", 112;
    dimension_count @ 0x00, 4, U32, Public;
    dimensions @ 0x04, 24, U32s, Public;
    data_format @ 0x1c, 4, U32, Public;
    data_type @ 0x20, 4, U32, Public;
    quant_format as "quantization.format" @ 0x24, 4, U32, Public;
    quant_words as "quantization.raw_words" @ 0x28, 8, U32s, Public;
    name @ 0x30, 64, Str, Public;
}

record! {
    /// v2 `nbg_section_network_info_t`.
    v2_network_info: "v2.network_info", V2, "nbg_section_network_info_t", 220;
    name @ 0x00, 64, Str, Public;
    input_count @ 0x40, 4, U32, Public;
    output_count @ 0x44, 4, U32, Public;
    layer_count @ 0x48, 4, U32, Public;
    absolute_operation_count @ 0x4c, 4, U32, Public;
    operation_count @ 0x50, 4, U32, Public;
    core_count @ 0x54, 4, U32, Public;
    address_width @ 0x58, 4, U32, Public;
    attribute @ 0x5c, 4, U32, Public, parts [
        change_ppu_param: 0, 1, Public;
        nn_command_size_code: 1, 2, Public;
        tp_command_size_code: 3, 2, Public;
        dma_support_code: 5, 2, Public;
        reserved_bits: 7, 25, Reserved;
    ];
    vsi_reserved @ 0x60, 124, U32s, Reserved;
}

record! {
    /// v2 `nbg_section_memory_pool_t`.
    v2_memory_pool: "v2.memory_pool", V2, "nbg_section_memory_pool_t", 8;
    used_size @ 0, 8, U64, Public;
}

record! {
    /// v2 `nbg_section_vip_sram_t`.
    v2_vip_sram: "v2.vip_sram", V2, "nbg_section_vip_sram_t", 4;
    used_size @ 0, 4, U32, Public;
}

record! {
    /// v2 `nbg_section_axi_sram_t`.
    v2_axi_sram: "v2.axi_sram", V2, "nbg_section_axi_sram_t", 4;
    used_size @ 0, 4, U32, Public;
}

record! {
    /// v2 section-40 record `nbg_section_checksum_t`.
    v2_checksum_record: "v2.checksum_record", V2, "nbg_section_checksum_t", 8;
    section_type @ 0, 4, U32, Public;
    checksum_value @ 4, 4, U32, Public;
}

record! {
    /// v2 DYNAIO table record: region-relative offset and payload size (corpus-proved).
    v2_dynaio_entry: "v2.dynaio_entry", V2, "DYNAIO table record (offset, size)", 8;
    offset @ 0, 4, U32, Proved;
    size @ 4, 4, U32, Proved;
}

record! {
    /// v2 (offset, size) index record into a data section: COEF_DATA_TABLE (23) into COEF_DATA
    /// (24), PPU_INSTR_TABLE (25) into PPU_INSTR (19), LOADSTATE_TABLE (27) into LOADSTATE (21),
    /// as the vendor reader's `nbg_fmt_read_section_*_table` and its per-operation sizes read
    /// them (`notebooks/real-v2.md`); the same layout as v1's `nbg_section_entry_32bit_t`.
    v2_index_entry: "v2.index_entry", V2, "nbg_section_entry_32bit_t (v2 index tables)", 8;
    offset @ 0, 4, U32, Public;
    size @ 4, 4, U32, Public;
}

record! {
    /// The header word of a front-end LOAD_STATE command (Mesa etnaviv `cmdstream.xml`): the
    /// first of COUNT state values at word address OFFSET; `nbg::commands` decodes the stream.
    fe_load_state: "fe.load_state", Both, "FE LOAD_STATE header (Mesa etnaviv cmdstream.xml)", 4;
    header @ 0, 4, U32, Public, parts [
        offset: 0, 16, Public;
        count: 16, 10, Public;
        fixp: 26, 1, Public;
        opcode: 27, 5, Public;
    ];
}

record! {
    /// A 192-byte NN command (v2 section 7, one per NN-engine operation). Words 0 to 33 are
    /// Mesa's `struct etna_nn_params` (etnaviv_ml_nn.c, MIT; sailfishos-mirror/mesa
    /// 16e15ee20514de1684b349e809fa9632e5afbe4d, the same as mirror/mesa 5a43a9d0), bit fields
    /// packed from bit 0 of word 0: the public layout. Parts labelled `Proved` are proved on
    /// the vendor's serializer, by a promoted mapping (zero points, post shift) or by the layer
    /// check over the NN capture sets (input and output image, kernel size and depth, output
    /// channels, fused ReLU, pooling and its window, data types: `simulator::geometry_proofs`); `nbg mapping fields`
    /// lists both. Words 34 to 47
    /// are in no public layout: unknown, named by word and bit range.
    nn_command: "nn_command", Both, "NN command: Mesa etna_nn_params (34 words) and 14 unknown words", 192;
    word0 @ 0, 4, U32, Public, parts [
        layer_type: 0, 1, Public;
        no_z_offset: 1, 1, Public;
        kernel_xy_size: 2, 4, Proved;
        kernel_z_size: 6, 14, Proved;
        kernels_per_core: 20, 7, Public;
        pooling: 27, 2, Proved;
        pooling_xy_size: 29, 1, Proved;
        prelu: 30, 1, Public;
        nn_layer_flush: 31, 1, Public;
    ];
    word1 @ 4, 4, U32, Public, parts [
        kernel_data_type: 0, 2, Proved;
        in_image_data_type: 2, 2, Proved;
        out_image_data_type: 4, 2, Proved;
        in_image_x_size: 6, 13, Proved;
        in_image_y_size: 19, 13, Proved;
    ];
    word2 @ 8, 4, U32, Public, parts [
        in_image_x_offset: 0, 3, Public;
        in_image_y_offset: 3, 3, Public;
        unused0: 6, 1, Public;
        brick_mode: 7, 1, Public;
        brick_distance: 8, 16, Public;
        relu: 24, 1, Proved;
        unused1: 25, 1, Public;
        post_multiplier: 26, 1, Public;
        post_shift: 27, 5, Proved;
    ];
    word3 @ 12, 4, U32, Public, parts [
        unused2: 0, 3, Public;
        no_flush: 3, 1, Public;
        unused3: 4, 2, Public;
        out_image_x_size: 6, 13, Proved;
        out_image_y_size: 19, 13, Proved;
    ];
    word4 @ 16, 4, U32, Public, parts [
        out_image_z_size: 0, 14, Proved;
        rounding_mode: 14, 2, Public;
        in_image_x_offset_bit_3: 16, 1, Public;
        in_image_y_offset_bit_3: 17, 1, Public;
        out_image_tile_x_size: 18, 7, Public;
        out_image_tile_y_size: 25, 7, Public;
    ];
    word5 @ 20, 4, U32, Public, parts [
        kernel_address: 0, 26, Public;
        kernel_z_size2: 26, 6, Public;
    ];
    word6 as "in_image_address" @ 24, 4, U32, Public;
    word7 as "out_image_address" @ 28, 4, U32, Public;
    word8 @ 32, 4, U32, Public, parts [
        image_caching_mode: 0, 2, Public;
        kernel_caching_mode: 2, 2, Public;
        partial_cache_data_unit: 4, 2, Public;
        kernel_pattern_msb: 6, 6, Public;
        kernel_y_size: 12, 4, Proved;
        out_image_y_stride: 16, 16, Public;
    ];
    word9 as "kernel_pattern_low" @ 36, 4, U32, Public;
    word10 as "kernel_pattern_high" @ 40, 4, U32, Public;
    word11 as "kernel_cache_start_address" @ 44, 4, U32, Public;
    word12 as "kernel_cache_end_address" @ 48, 4, U32, Public;
    word13 as "image_cache_start_address" @ 52, 4, U32, Public;
    word14 as "image_cache_end_address" @ 56, 4, U32, Public;
    word15 @ 60, 4, U32, Public, parts [
        in_image_border_mode: 0, 2, Public;
        in_image_border_const: 2, 16, Proved;
        unused4: 18, 1, Public;
        kernel_data_type_bit_2: 19, 1, Public;
        in_image_data_type_bit_2: 20, 1, Public;
        out_image_data_type_bit_2: 21, 1, Public;
        post_multiplier_1_to_6: 22, 6, Public;
        post_shift_bit_5_6: 28, 2, Proved;
        unused5: 30, 2, Public;
    ];
    word16 @ 64, 4, U32, Public, parts [
        in_image_x_stride: 0, 16, Public;
        in_image_y_stride: 16, 16, Public;
    ];
    word17 @ 68, 4, U32, Public, parts [
        out_image_x_stride: 0, 16, Public;
        unused6: 16, 8, Public;
        post_multiplier_7_to_14: 24, 8, Public;
    ];
    word18 @ 72, 4, U32, Public, parts [
        out_image_circular_buf_size: 0, 26, Public;
        per_channel_post_mul: 26, 1, Public;
        unused7_0: 27, 1, Public;
        unused7_1: 28, 1, Public;
        unused7_2: 29, 1, Public;
        unused7_3: 30, 2, Public;
    ];
    word19 @ 76, 4, U32, Public, parts [
        out_image_circular_buf_end_addr_plus_1: 0, 26, Public;
        unused8: 26, 6, Public;
    ];
    word20 @ 80, 4, U32, Public, parts [
        in_image_circular_buf_size: 0, 26, Public;
        unused9: 26, 6, Public;
    ];
    word21 @ 84, 4, U32, Public, parts [
        in_image_circular_buf_end_addr_plus_1: 0, 26, Public;
        unused10: 26, 6, Public;
    ];
    word22 @ 88, 4, U32, Public, parts [
        coef_zero_point: 0, 8, Public;
        out_zero_point: 8, 8, Proved;
        kernel_direct_stream_from_vip_sram: 16, 1, Public;
        depthwise: 17, 1, Public;
        post_multiplier_15_to_22: 18, 8, Public;
        unused11: 26, 6, Public;
    ];
    word23 as "unused12" @ 92, 4, U32, Public;
    word24 @ 96, 4, U32, Public, parts [
        unused13: 0, 4, Public;
        unused14: 4, 28, Public;
    ];
    word25 @ 100, 4, U32, Public, parts [
        unused15: 0, 4, Public;
        unused16: 4, 28, Public;
    ];
    word26 as "further1" @ 104, 4, U32, Public;
    // Mesa's `further2` (set to 0 by its driver); bit 30 carries bit 7 of the post shift on
    // the serializer's VIP9000 (proved by `nbg mapping fields`).
    word27 @ 108, 4, U32, Public, parts [
        further2_b0_29: 0, 30, Public;
        post_shift_bit_7: 30, 1, Proved;
        further2_b31: 31, 1, Public;
    ];
    word28 as "further3" @ 112, 4, U32, Public;
    word29 as "further4" @ 116, 4, U32, Public;
    word30 as "further5" @ 120, 4, U32, Public;
    word31 as "further6" @ 124, 4, U32, Public;
    word32 as "further7" @ 128, 4, U32, Public;
    word33 as "further8" @ 132, 4, U32, Public;
    word34 as "unknown_w34_b0_31" @ 136, 4, U32, Unknown;
    word35 as "unknown_w35_b0_31" @ 140, 4, U32, Unknown;
    word36 as "unknown_w36_b0_31" @ 144, 4, U32, Unknown;
    word37 as "unknown_w37_b0_31" @ 148, 4, U32, Unknown;
    word38 as "unknown_w38_b0_31" @ 152, 4, U32, Unknown;
    word39 as "unknown_w39_b0_31" @ 156, 4, U32, Unknown;
    word40 as "unknown_w40_b0_31" @ 160, 4, U32, Unknown;
    word41 as "unknown_w41_b0_31" @ 164, 4, U32, Unknown;
    word42 as "unknown_w42_b0_31" @ 168, 4, U32, Unknown;
    word43 as "unknown_w43_b0_31" @ 172, 4, U32, Unknown;
    word44 as "unknown_w44_b0_31" @ 176, 4, U32, Unknown;
    word45 as "unknown_w45_b0_31" @ 180, 4, U32, Unknown;
    word46 as "unknown_w46_b0_31" @ 184, 4, U32, Unknown;
    word47 as "unknown_w47_b0_31" @ 188, 4, U32, Unknown;
}

record! {
    /// A 192-byte TP command (v2 section 8, one per TP operation). Words 0 to 30 are Mesa's
    /// `struct etna_tp_params` (etnaviv_ml_tp.c, MIT; sailfishos-mirror/mesa
    /// 16e15ee20514de1684b349e809fa9632e5afbe4d, the same at mirror/mesa 5a43a9d0 and in the
    /// oldest copy read), bit fields packed from bit 0 of word 0: the public layout. `in_zp` and
    /// `out_zp` are proved on the serializer by promoted mappings (the Relu's zero points on
    /// 0x9f, `serializer-tp-relu-*`); the rest is not yet proved field by field. Words 31 to 47
    /// are in no public layout: unknown, named by word and bit range.
    tp_command: "tp_command", Both, "TP command: Mesa etna_tp_params (31 words) and 17 unknown words", 192;
    word0 @ 0, 4, U32, Public, parts [
        in_image_x_size: 0, 16, Public;
        unused0: 16, 16, Public;
    ];
    word1 @ 4, 4, U32, Public, parts [
        in_image_y_size: 0, 16, Public;
        in_image_z_size: 16, 16, Public;
    ];
    word2 @ 8, 4, U32, Public, parts [
        in_image_stride: 0, 16, Public;
        unused1: 16, 16, Public;
    ];
    word3 as "in_image_slice" @ 12, 4, U32, Public;
    word4 @ 16, 4, U32, Public, parts [
        in_window_x_start: 0, 16, Public;
        in_window_y_start: 16, 16, Public;
    ];
    word5 @ 20, 4, U32, Public, parts [
        in_window_x_end: 0, 16, Public;
        in_window_y_end: 16, 16, Public;
    ];
    word6 @ 24, 4, U32, Public, parts [
        in_tile_sequence: 0, 2, Public;
        in_tile_global_mem: 2, 1, Public;
        in_image_global_mem: 3, 1, Public;
        alu_i2f_enable: 4, 1, Public;
        alu_square_enable: 5, 1, Public;
        alu_horz_processing: 6, 3, Public;
        alu_horz_proc_count: 9, 6, Public;
        alu_horz_proc_stride: 15, 1, Public;
        alu_vert_processing: 16, 2, Public;
        unused2: 18, 1, Public;
        alu_vert_proc_count: 19, 6, Public;
        alu_vert_proc_stride: 25, 1, Public;
        alu_nms_enable: 26, 1, Public;
        alu_pwl_enable: 27, 1, Public;
        alu_mult_enable: 28, 1, Public;
        alu_f2i_enable: 29, 1, Public;
        alu_load_pwl_lut: 30, 1, Public;
        alu_load_pwl_lut_global_mem: 31, 1, Public;
    ];
    word7 as "in_tile_list_address" @ 28, 4, U32, Public;
    word8 @ 32, 4, U32, Public, parts [
        in_tile_x_size: 0, 16, Public;
        in_tile_y_size: 16, 16, Public;
    ];
    word9 @ 36, 4, U32, Public, parts [
        in_tile_x_inc: 0, 16, Public;
        in_tile_y_inc: 16, 16, Public;
    ];
    word10 as "in_image_base_address" @ 40, 4, U32, Public;
    word11 as "alu_load_pwl_lut_address" @ 44, 4, U32, Public;
    word12 @ 48, 4, U32, Public, parts [
        out_tile_skip_at_border: 0, 1, Public;
        out_image_global_mem: 1, 1, Public;
        out_loop_1_reset: 2, 1, Public;
        out_loop_2_reset: 3, 1, Public;
        out_loop_3_reset: 4, 1, Public;
        out_brick_mode: 5, 1, Public;
        alu_z_filter_mode: 6, 1, Public;
        unused3: 7, 1, Public;
        in_window_z_start_overfetch: 8, 2, Public;
        unused4: 10, 1, Public;
        in_window_z_end_overfetch: 11, 2, Public;
        unused5: 13, 1, Public;
        alu_square_preshift: 14, 4, Public;
        in_image_data_type: 18, 3, Public;
        out_image_data_type: 21, 3, Public;
        unused6: 24, 4, Public;
        alu_pwl_sign_support: 28, 1, Public;
        alu_relu_enable: 29, 1, Public;
        no_flush: 30, 1, Public;
        last: 31, 1, Public;
    ];
    word13 as "out_image_base_address" @ 52, 4, U32, Public;
    word14 as "out_loop_0_inc" @ 56, 4, U32, Public;
    word15 as "out_loop_1_inc" @ 60, 4, U32, Public;
    word16 @ 64, 4, U32, Public, parts [
        out_loop_0_count: 0, 16, Public;
        out_loop_1_count: 16, 16, Public;
    ];
    word17 as "out_loop_2_inc" @ 68, 4, U32, Public;
    word18 as "out_loop_3_inc" @ 72, 4, U32, Public;
    word19 @ 76, 4, U32, Public, parts [
        out_loop_2_count: 0, 16, Public;
        out_loop_3_count: 16, 16, Public;
    ];
    word20 as "out_loop_4_inc" @ 80, 4, U32, Public;
    word21 as "out_loop_5_inc" @ 84, 4, U32, Public;
    word22 @ 88, 4, U32, Public, parts [
        out_loop_4_count: 0, 16, Public;
        out_loop_5_count: 16, 16, Public;
    ];
    word23 as "out_loop_6_inc" @ 92, 4, U32, Public;
    word24 @ 96, 4, U32, Public, parts [
        alu_filter_pwl_swap: 0, 1, Public;
        flat_rounding_mode: 1, 2, Public;
        integer_rounding_mode: 3, 2, Public;
        alu_input_preshift: 5, 5, Public;
        alu_output_postshift: 10, 5, Public;
        alu_reorder_bits_used: 15, 4, Public;
        alu_reorder_loop_2_mode: 19, 1, Public;
        unused7: 20, 4, Public;
        in_image_border_mode: 24, 2, Public;
        alu_output_postshift_5_6: 26, 2, Public;
        unused8: 28, 4, Public;
    ];
    word25 as "in_image_circular_buf_size" @ 100, 4, U32, Public;
    word26 as "in_image_circular_buf_end_address_plus_1" @ 104, 4, U32, Public;
    word27 as "out_image_circular_buf_size" @ 108, 4, U32, Public;
    word28 as "out_image_circular_buf_end_address_plus_1" @ 112, 4, U32, Public;
    word29 @ 116, 4, U32, Public, parts [
        in_image_border_const: 0, 16, Public;
        coef_zp: 16, 8, Public;
        in_zp: 24, 8, Proved;
    ];
    word30 @ 120, 4, U32, Public, parts [
        out_zp: 0, 8, Proved;
        alu_output_post_multiplier: 8, 15, Public;
        unused9: 23, 9, Public;
    ];
    word31 as "unknown_w31_b0_31" @ 124, 4, U32, Unknown;
    word32 as "unknown_w32_b0_31" @ 128, 4, U32, Unknown;
    word33 as "unknown_w33_b0_31" @ 132, 4, U32, Unknown;
    word34 as "unknown_w34_b0_31" @ 136, 4, U32, Unknown;
    word35 as "unknown_w35_b0_31" @ 140, 4, U32, Unknown;
    word36 as "unknown_w36_b0_31" @ 144, 4, U32, Unknown;
    word37 as "unknown_w37_b0_31" @ 148, 4, U32, Unknown;
    word38 as "unknown_w38_b0_31" @ 152, 4, U32, Unknown;
    word39 as "unknown_w39_b0_31" @ 156, 4, U32, Unknown;
    word40 as "unknown_w40_b0_31" @ 160, 4, U32, Unknown;
    word41 as "unknown_w41_b0_31" @ 164, 4, U32, Unknown;
    word42 as "unknown_w42_b0_31" @ 168, 4, U32, Unknown;
    word43 as "unknown_w43_b0_31" @ 172, 4, U32, Unknown;
    word44 as "unknown_w44_b0_31" @ 176, 4, U32, Unknown;
    word45 as "unknown_w45_b0_31" @ 180, 4, U32, Unknown;
    word46 as "unknown_w46_b0_31" @ 184, 4, U32, Unknown;
    word47 as "unknown_w47_b0_31" @ 188, 4, U32, Unknown;
}

/// The first `fields` fields of `base` as a record of their own: a shorter form of the same
/// layout, proved contiguous like every record.
const fn prefix(
    base: Record,
    id: &'static str,
    public_name: &'static str,
    fields: usize,
) -> Record {
    let fields = base.fields.split_at(fields).0;
    let size = match fields.last() {
        Some(f) => f.offset + f.width,
        None => 0,
    };
    assert!(layout_ok(fields, size));
    Record {
        id,
        family: base.family,
        public_name,
        size,
        fields,
        base: Some(base.id),
    }
}

/// The 128-byte NN command of VIP8000-class files (the v1 feature database's and the v2
/// network attribute's `nn_command_size` code 0, `NBG_NN_COMMAND_SIZE_128`): words 0 to 31 of
/// `nn_command`. Vivante's OpenVX driver writes 128-byte NN and TP commands
/// (`NNE_COMMAND_SIZE`, `TP_COMMAND_SIZE`; flycat0101/gpu-viv6-andy 249e5c61, `gc_vx_common.h`)
/// and patches their kernel, input and output addresses at words 5, 6 and 7 as Mesa's layout
/// places them.
pub const NN_COMMAND_128: Record = prefix(
    nn_command::RECORD,
    "nn_command_128",
    "NN command, 128 bytes: words 0-31 of Mesa etna_nn_params",
    32,
);

/// The 128-byte TP command: words 0 to 31 of `tp_command` (Mesa's 31 words and one unknown).
/// The driver above patches its input, lookup-table and output addresses at words 10, 11 and
/// 13, where Mesa's layout has `in_image_base_address`, `alu_load_pwl_lut_address` and
/// `out_image_base_address`.
pub const TP_COMMAND_128: Record = prefix(
    tp_command::RECORD,
    "tp_command_128",
    "TP command, 128 bytes: words 0-31 of Mesa etna_tp_params",
    32,
);

record! {
    /// A TP piecewise-linear lookup table, as the serializer stores one in the coefficient data
    /// (an entry `alu_load_pwl_lut_address` points at): Mesa's 1024 PWL entries
    /// (`etnaviv_ml_tp.c` writes a 1024-entry table for its ReLU, each entry an fp21 value: sign
    /// bit 20, 5-bit exponent, 15-bit mantissa) followed by two words Mesa does not write;
    /// Vivante's driver sizes the buffer `TP_LUT_BUFF_SIZE` = 1024 + 2 entries of 32 bits
    /// (flycat0101/gpu-viv6-andy 249e5c61, `gc_vx_nn_util.h`). Measured: every TP lookup table of
    /// the serializer controls is 4104 bytes.
    tp_pwl_lut: "tp_pwl_lut", Both, "TP PWL lookup table: 1024 entries and 2 words", 4104;
    entries @ 0, 4096, U32s, Public;
    word1024 as "unknown_w1024_b0_31" @ 4096, 4, U32, Unknown;
    word1025 as "unknown_w1025_b0_31" @ 4100, 4, U32, Unknown;
}

record! {
    /// A word of a data buffer that no public layout describes: the hardware-init graph's
    /// buffers in the ICD (its images, its shader's data, the buffer its TP command's
    /// `alu_load_pwl_lut_address` names, and the VIP8000-class coefficients), whose role the
    /// patch relocating their address proves (`patch_targets::Role`). Unknown, named by word.
    buffer_word: "buffer_word", Both, "a word of a data buffer (no public layout)", 4;
    word as "unknown_b0_31" @ 0, 4, U32, Unknown;
}

record! {
    /// A byte of such a buffer whose size is not whole words (the init graph's 2- and 6-byte
    /// images). Unknown, named by byte.
    buffer_byte: "buffer_byte", Both, "a byte of a data buffer (no public layout)", 1;
    byte as "unknown_b0_7" @ 0, 1, U8, Unknown;
}

record! {
    /// One shader instruction of the NPU's programmable unit (PPU, the Vivante shader core):
    /// 128 bits as four little-endian words, laid out as Mesa's etnaviv ISA description gives
    /// its common ALU form (bminor/mesa-mesa 0f25d5e3, `src/etnaviv/isa/etnaviv.xml`:
    /// `#instruction`, `#instruction-alu`, `#instruction-dst`, `#instruction-src` and the
    /// `-src0-src1-src2` variant). The opcode is `opcode_bit6 << 6 | opc`. Other forms read some
    /// of these bits otherwise, and keep their names here: texture loads hold `tex_id` in word 0
    /// bits 27-31 and their swizzle in word 1 bits 3-10; loads and stores a left shift in word 1
    /// bits 3-5 and `local`/`denorm` in bits 8 and 10; control flow a branch target in bits
    /// 103-117 (word 3 bits 7-21); an immediate source (register group 7) spreads a 20-bit
    /// value over that source's register, swizzle, negate, absolute and addressing-mode bits.
    shader_instruction: "shader_instruction", Both, "shader instruction (Mesa etnaviv ISA, 128 bits)", 16;
    word0 @ 0, 4, U32, Public, parts [
        opc: 0, 6, Public;
        cond: 6, 5, Public;
        sat: 11, 1, Public;
        dst_use: 12, 1, Public;
        dst_amode: 13, 3, Public;
        dst_reg: 16, 7, Public;
        dst_comps: 23, 4, Public;
        tex_id: 27, 5, Public;
    ];
    word1 @ 4, 4, U32, Public, parts [
        rmode: 0, 2, Public;
        pmode: 2, 1, Public;
        left_shift_or_tex_swiz: 3, 4, Public;
        skphp: 7, 1, Public;
        local_denorm_or_tex_swiz: 8, 3, Public;
        src0_use: 11, 1, Public;
        src0_reg: 12, 9, Public;
        type_bit2: 21, 1, Public;
        src0_swiz: 22, 8, Public;
        src0_neg: 30, 1, Public;
        src0_abs: 31, 1, Public;
    ];
    word2 @ 8, 4, U32, Public, parts [
        src0_amode: 0, 3, Public;
        src0_rgroup: 3, 3, Public;
        src1_use: 6, 1, Public;
        src1_reg: 7, 9, Public;
        opcode_bit6: 16, 1, Public;
        src1_swiz: 17, 8, Public;
        src1_neg: 25, 1, Public;
        src1_abs: 26, 1, Public;
        src1_amode: 27, 3, Public;
        type_bit01: 30, 2, Public;
    ];
    word3 @ 12, 4, U32, Public, parts [
        src1_rgroup: 0, 3, Public;
        src2_use: 3, 1, Public;
        src2_reg: 4, 9, Public;
        low_half: 13, 1, Public;
        src2_swiz: 14, 8, Public;
        src2_neg: 22, 1, Public;
        src2_abs: 23, 1, Public;
        high_half: 24, 1, Public;
        src2_amode: 25, 3, Public;
        src2_rgroup: 28, 3, Public;
        dst_full: 31, 1, Public;
    ];
}

/// The NN command layouts by size (`nbg_nn_command_size_e`: 192 and 128 bytes).
pub const NN_LAYOUTS: [Record; 2] = [nn_command::RECORD, NN_COMMAND_128];

/// The TP command layouts by size (`nbg_tp_command_size_e`).
pub const TP_LAYOUTS: [Record; 2] = [tp_command::RECORD, TP_COMMAND_128];

record! {
    /// `nbg_section_layer` (v2 section 3, v1 layer table); `uid` from v1 0x00010008.
    layer: "layer", Both, "nbg_section_layer_t", 76;
    name @ 0x00, 64, Str, Public;
    id @ 0x40, 4, U32, Public;
    operation_count @ 0x44, 4, U32, Public;
    uid @ 0x48, 4, U32, Public, since 0x0001_0008;
}

record! {
    /// `nbg_section_operation` (v2 section 4, v1 operation table): the preempt word from v1
    /// 0x00010011, `abs_op_id` from v1 0x00010017.
    operation: "operation", Both, "nbg_section_operation_t", 32;
    kind as "type" @ 0x00, 4, U32, Public;
    index @ 0x04, 4, U32, Public;
    layer_id @ 0x08, 4, U32, Public;
    state_id @ 0x0c, 4, U32, Public;
    patch_index @ 0x10, 4, U32, Public;
    patch_count @ 0x14, 4, U32, Public;
    preempt_word @ 0x18, 4, U32, Public, since 0x0001_0011,
        parts [preempt: 0, 4, Public; abs_share_id: 4, 28, Public];
    abs_op_id @ 0x1c, 4, U32, Public, since 0x0001_0017;
}

record! {
    /// `nbg_section_sh_operation` (v2 section 9, v1 sh table); `ppu_param_index` from v1
    /// 0x0001000e.
    sh_operation: "sh_operation", Both, "nbg_section_sh_operation_t", 8;
    instr_index @ 0, 4, U32, Public;
    ppu_param_index @ 4, 4, U32, Public, since 0x0001_000e;
}

record! {
    /// `nbg_section_patch_table` (v2 section 10, v1 patch table); `name` from v1 0x00010006.
    patch: "patch", Both, "nbg_section_patch_table_t", 28;
    kind as "type" @ 0x00, 4, U32, Public;
    dest_offset @ 0x04, 4, U32, Public;
    source_type @ 0x08, 4, U32, Public;
    index @ 0x0c, 4, I32, Public;
    src_offset @ 0x10, 4, U32, Public;
    transformed @ 0x14, 4, U32, Public;
    name @ 0x18, 4, U32, Public, since 0x0001_0006;
}

record! {
    /// `nbg_section_patch_table_40bit`: v2 40-byte patch sections and every v1 file from
    /// 0x00010014 (corpus-proved gate).
    patch_40bit: "patch_40bit", Both, "nbg_section_patch_table_40bit_t", 40;
    kind as "type" @ 0x00, 4, U32, Public;
    dest_offset @ 0x04, 4, U32, Public;
    source_type @ 0x08, 4, U32, Public;
    index @ 0x0c, 4, I32, Public;
    src_offset @ 0x10, 4, U32, Public;
    transformed @ 0x14, 4, U32, Public;
    name @ 0x18, 4, U32, Public;
    dest_offset_h @ 0x1c, 4, U32, Public;
    src_offset_h @ 0x20, 4, U32, Public;
    mask_h @ 0x24, 4, U32, Public;
}

record! {
    /// The v1 fixed part up to the (offset, size) entries: header, the 256-byte feature
    /// database (from 0x00010003), memory pool, AXI SRAM and (from 0x00010008) VIP SRAM.
    v1_fixed: "v1.fixed", V1, "v1 NBG header with feature database (TIM-VX / VIPLite v1)", 0x178;
    magic @ 0x00, 4, Magic, Public;
    version @ 0x04, 4, U32, Public;
    target @ 0x08, 4, U32, Public;
    network_name @ 0x0c, 64, Str, Public;
    layer_count @ 0x4c, 4, U32, Public;
    operation_count @ 0x50, 4, U32, Public;
    input_count @ 0x54, 4, U32, Public;
    output_count @ 0x58, 4, U32, Public;
    feature_bits as "feature_database.bits" @ 0x5c, 4, U32, Public, parts [
        hi_reorder_fix: 0, 1, Public;
        ocb_counter: 1, 1, Public;
        nn_command_size: 2, 2, Public;
        change_ppu_param: 4, 1, Public;
        tp_command_size: 5, 2, Public;
        support_dma: 7, 2, Public;
        nbg_40bit_va: 9, 2, Public;
        isp_emulator: 11, 1, Public;
        relat_addr_ker_id: 12, 2, Public;
        relat_addr_inimage_id: 14, 2, Public;
        relat_addr_secinimage_id: 16, 2, Public;
        relat_addr_outimage_id: 18, 2, Public;
        denoise_bypass: 20, 1, Public;
        command_loop: 21, 1, Public;
        job_cancel: 22, 1, Public;
        nn_tp_probe: 23, 1, Public;
        kernel_descriptor: 24, 1, Public;
        nn_transpose_phase2: 25, 1, Public;
        reserved: 26, 6, Reserved;
    ];
    num_pixel_pipes as "feature_database.num_pixel_pipes" @ 0x60, 4, U32, Public;
    core_fields as "feature_database.core_fields" @ 0x64, 8, U64, Public, parts [
        core_count: 0, 8, Public;
        device_index: 8, 8, Public;
        axi_bus_width_index: 16, 8, Public;
        cluster_id_width: 24, 8, Public;
        nn_core_count: 32, 8, Public;
        tp_core_count: 40, 8, Public;
        reserved: 48, 16, Reserved;
    ];
    nbg_crc_sum @ 0x6c, 4, U32, Public;
    vip_sram_width as "feature_database.vip_sram_width" @ 0x70, 4, U32, Public;
    vsi_reserved as "feature_database.vsi_reserved" @ 0x74, 40, Bytes, Reserved;
    customer_reserved as "feature_database.customer_reserved" @ 0x9c, 192, Bytes, Reserved;
    memory_pool @ 0x15c, 12, U32s, Public, elements ["size", "alignment", "base"];
    axi_sram @ 0x168, 8, U32s, Public, elements ["base", "size"];
    vip_sram @ 0x170, 8, U32s, Public, since 0x0001_0008, elements ["base", "size"];
}

record! {
    /// v1 (offset, size) entry of the fixed part (`nbg_section_entry_32bit_t`); also the
    /// nested index tables (lcd, icd, coefficient, PPU instruction, DYNAIO, load-state).
    v1_entry: "v1.entry", V1, "nbg_section_entry_32bit_t", 8;
    offset @ 0, 4, U32, Public;
    size @ 4, 4, U32, Public;
}

record! {
    /// v1 I/O record from 0x0001000b: six dimensions, three quantization slots, a name.
    v1_io_record: "v1.io_record", V1, "v1 input/output record (6 dims)", 116;
    dimension_count @ 0, 4, U32, Public;
    dimensions @ 4, 24, U32s, Public;
    data_format @ 28, 4, U32, Public;
    data_type @ 32, 4, U32, Public;
    quant_format as "quantization.format" @ 36, 4, U32, Public;
    fixed_point as "quantization.fixed_point_position" @ 40, 4, I32, Public;
    scale as "quantization.scale" @ 44, 4, U32, Public;
    zero_point as "quantization.zero_point" @ 48, 4, I32, Public;
    name @ 52, 64, Str, Public;
}

record! {
    /// v1 I/O record from 0x00010004 to 0x0001000a: four dimensions and a name.
    v1_io_record_108: "v1.io_record_108", V1, "v1 input/output record (4 dims)", 108;
    dimension_count @ 0, 4, U32, Public;
    dimensions @ 4, 16, U32s, Public;
    data_format @ 20, 4, U32, Public;
    data_type @ 24, 4, U32, Public;
    quant_format as "quantization.format" @ 28, 4, U32, Public;
    fixed_point as "quantization.fixed_point_position" @ 32, 4, I32, Public;
    scale as "quantization.scale" @ 36, 4, U32, Public;
    zero_point as "quantization.zero_point" @ 40, 4, I32, Public;
    name @ 44, 64, Str, Public;
}

record! {
    /// v1 I/O record before 0x00010004: four dimensions, no name.
    v1_io_record_44: "v1.io_record_44", V1, "v1 input/output record (4 dims, no name)", 44;
    dimension_count @ 0, 4, U32, Public;
    dimensions @ 4, 16, U32s, Public;
    data_format @ 20, 4, U32, Public;
    data_type @ 24, 4, U32, Public;
    quant_format as "quantization.format" @ 28, 4, U32, Public;
    fixed_point as "quantization.fixed_point_position" @ 32, 4, I32, Public;
    scale as "quantization.scale" @ 36, 4, U32, Public;
    zero_point as "quantization.zero_point" @ 40, 4, I32, Public;
}

record! {
    /// `nbg_section_sw_operation`: the name from v1 0x00010009.
    v1_sw_operation: "v1.sw_operation", V1, "nbg_section_sw_operation_t", 68;
    sw_operation_type @ 0, 4, U32, Public;
    name @ 4, 64, Str, Public, since 0x0001_0009;
}

record! {
    /// `nbg_section_hw_init_operation`: v1 from 0x0001000c, v2 section 13 (HWINITOPERATIONS).
    hw_init_operation: "hw_init_operation", Both, "nbg_section_hw_init_operation_t", 12;
    state_id @ 0, 4, U32, Public;
    patch_index @ 4, 4, U32, Public;
    patch_count @ 8, 4, U32, Public;
}

record! {
    /// `nbg_section_ppu_param` (from v1 0x0001000e).
    v1_ppu_param: "v1.ppu_param", V1, "nbg_section_ppu_param_t", 48;
    global_offset @ 0, 12, U32s, Public, elements ["x", "y", "z"];
    global_scale @ 12, 12, U32s, Public, elements ["x", "y", "z"];
    group_size @ 24, 12, U32s, Public, elements ["x", "y", "z"];
    group_count @ 36, 12, U32s, Public, elements ["x", "y", "z"];
}

record! {
    /// The 64-byte header of a VIP9000-class NN coefficient buffer: Mesa's `struct
    /// etna_nn_header_v8` (etnaviv_ml_nn_v8.c, MIT; sailfishos-mirror/mesa
    /// 16e15ee20514de1684b349e809fa9632e5afbe4d), bit fields from bit 0. `stream_size` holds one
    /// word per NN core (the bits of its stream, padding excluded) up to the end of the header;
    /// the A733 files fill 8 of the 9 and leave the last 0.
    coef_header_v8: "coef_header_v8", V2, "Mesa etna_nn_header_v8 (NN coefficient buffer header)", 64;
    flags @ 0, 1, U8, Public, parts [
        precode: 0, 1, Public;
        bit16: 1, 1, Public;
        fp16: 2, 1, Public;
        reserved1: 3, 1, Public;
        version: 4, 4, Public;
    ];
    run_length_size @ 1, 1, U8, Public;
    run_length_table @ 2, 18, Bytes, Public;
    symbol_map @ 20, 4, U32, Public, parts [
        symbol0_bits: 0, 4, Public;
        symbol1_bits: 4, 4, Public;
        symbol2_bits: 8, 4, Public;
        symbol3_bits: 12, 4, Public;
        symbol4_bits: 16, 4, Public;
        symbol5_bits: 20, 4, Public;
        symbol6_bits: 24, 4, Public;
        symbol7_bits: 28, 4, Public;
    ];
    word6 @ 24, 4, U32, Public, parts [
        avg_bias: 0, 16, Public;
        reserved2: 16, 16, Public;
    ];
    stream_size @ 28, 36, U32s, Public;
}

/// Every record, in export order. The public layer-parameter record is absent: public sources
/// give a 16-byte name with four (68-byte record) or six (76-byte) dimensions, but none ties
/// either form to a version, and every public file's table is empty, so the map does not guess.
pub const ALL: [Record; 34] = [
    v2_header::RECORD,
    v2_sub_header::RECORD,
    v2_section_header::RECORD,
    v2_io_record::RECORD,
    v2_network_info::RECORD,
    v2_memory_pool::RECORD,
    v2_vip_sram::RECORD,
    v2_axi_sram::RECORD,
    v2_checksum_record::RECORD,
    v2_dynaio_entry::RECORD,
    v2_index_entry::RECORD,
    fe_load_state::RECORD,
    nn_command::RECORD,
    NN_COMMAND_128,
    tp_command::RECORD,
    TP_COMMAND_128,
    tp_pwl_lut::RECORD,
    shader_instruction::RECORD,
    buffer_word::RECORD,
    buffer_byte::RECORD,
    coef_header_v8::RECORD,
    layer::RECORD,
    operation::RECORD,
    sh_operation::RECORD,
    patch::RECORD,
    patch_40bit::RECORD,
    v1_fixed::RECORD,
    v1_entry::RECORD,
    v1_io_record::RECORD,
    v1_io_record_108::RECORD,
    v1_io_record_44::RECORD,
    v1_sw_operation::RECORD,
    hw_init_operation::RECORD,
    v1_ppu_param::RECORD,
];

/// A bounds-checked read view of one record: construction checks the length once, so every
/// field read after it is in range (`layout_ok` proves each field lies inside the record).
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    bytes: &'a [u8],
}

impl<'a> View<'a> {
    /// A view of `bytes` as `record` at its full size or a version-gated shorter size.
    pub fn new(record: &Record, bytes: &'a [u8]) -> Option<Self> {
        (bytes.len() <= record.size && record.has_size(bytes.len())).then_some(View { bytes })
    }

    /// Whether this record instance holds `f` (a version-gated field may be absent).
    pub fn has(&self, f: &Field) -> bool {
        f.end() <= self.bytes.len()
    }

    /// The raw bytes of `f` (empty when the instance does not hold it).
    pub fn bytes(&self, f: &Field) -> &'a [u8] {
        self.bytes.get(f.offset..f.end()).unwrap_or(&[])
    }

    /// An integer field as u64 (little-endian), zero when absent.
    pub fn uint(&self, f: &Field) -> u64 {
        // The common widths without a variable-length copy: parsing reads millions of them.
        match *self.bytes(f) {
            [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
            [a, b] => u64::from(u16::from_le_bytes([a, b])),
            [a] => u64::from(a),
            ref b => {
                let mut buf = [0u8; 8];
                let n = b.len().min(8);
                buf[..n].copy_from_slice(&b[..n]);
                u64::from_le_bytes(buf)
            }
        }
    }

    /// A u32 field, zero when absent.
    pub fn u32(&self, f: &Field) -> u32 {
        self.uint(f) as u32
    }

    /// A u32 field, `None` when the instance does not hold it.
    pub fn opt_u32(&self, f: &Field) -> Option<u32> {
        self.has(f).then(|| self.u32(f))
    }

    /// Word `i` of a `U32s` field.
    pub fn word(&self, f: &Field, i: usize) -> u32 {
        let b = self.bytes(f);
        b.get(4 * i..4 * i + 4)
            .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    }

    /// Every word of a `U32s` field.
    pub fn words(&self, f: &Field) -> Vec<u32> {
        (0..self.bytes(f).len() / 4)
            .map(|i| self.word(f, i))
            .collect()
    }
}

/// A value that does not fit its field: refused, never truncated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the value of field `{field}` does not fit it")]
pub struct Overflow {
    /// The field's name in the field map.
    pub field: &'static str,
}

/// A record being written: zero-filled at the instance size, fields set through the map.
/// Values that do not fit their field are refused, never truncated.
#[derive(Clone, Debug)]
pub struct Writer {
    bytes: Vec<u8>,
    /// The first field whose value did not fit.
    overflow: Option<&'static str>,
}

impl Writer {
    /// A zero-filled record instance of `size` bytes.
    pub fn new(size: usize) -> Self {
        Writer {
            bytes: vec![0; size],
            overflow: None,
        }
    }

    fn fail(&mut self, f: &Field) {
        self.overflow.get_or_insert(f.name);
    }

    /// Mark a field as impossible to encode from the value at hand (a value the layout has no
    /// place for, or a missing value the layout needs).
    pub fn refuse(&mut self, f: &Field) -> &mut Self {
        self.fail(f);
        self
    }

    /// Copy `value` to the start of the field; a value longer than the field, or a field the
    /// instance does not hold, is refused.
    pub fn put_bytes(&mut self, f: &Field, value: &[u8]) -> &mut Self {
        match self.bytes.get_mut(f.offset..f.end()) {
            Some(slot) if value.len() <= slot.len() => slot[..value.len()].copy_from_slice(value),
            _ => self.fail(f),
        }
        self
    }

    /// Set an integer field; a value wider than the field is refused.
    pub fn put_uint(&mut self, f: &Field, v: u64) -> &mut Self {
        if f.width < 8 && v >> (8 * f.width) != 0 {
            return self.refuse(f);
        }
        let le = v.to_le_bytes();
        self.put_bytes(f, &le[..f.width.min(8)])
    }

    /// Set a u32 field.
    pub fn put_u32(&mut self, f: &Field, v: u32) -> &mut Self {
        self.put_uint(f, u64::from(v))
    }

    /// Set the field only where the record instance holds it; a value for an absent field is
    /// a mismatch.
    pub fn put_opt_u32(&mut self, f: &Field, v: Option<u32>) -> &mut Self {
        match v {
            Some(v) => self.put_u32(f, v),
            None if f.end() <= self.bytes.len() => self.refuse(f),
            None => self,
        }
    }

    /// Set a bitfield from its parts' values, in part order; a value wider than its part, or a
    /// count other than the part count, is refused.
    pub fn put_parts(&mut self, f: &Field, values: &[u64]) -> &mut Self {
        match f.pack(values) {
            Some(raw) if values.len() == f.parts.len() => self.put_uint(f, raw),
            _ => self.refuse(f),
        }
    }

    /// Set a `U32s` field word by word from its start; more words than it holds are refused.
    pub fn put_words(&mut self, f: &Field, words: &[u32]) -> &mut Self {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.put_bytes(f, &bytes)
    }

    /// A string field: the text, NUL-padded to the width (a full-width text has no NUL and is
    /// refused, as the parser refuses it).
    pub fn put_str(&mut self, f: &Field, text: &str) -> &mut Self {
        if text.len() >= f.width {
            return self.refuse(f);
        }
        self.put_bytes(f, text.as_bytes())
    }

    /// A decoded name field as it was: the text, its NUL, then the bytes that followed the NUL
    /// (what does not fit the width is refused).
    pub fn put_name(
        &mut self,
        f: &Field,
        text: &str,
        tail: &crate::nbg::read::NameTail,
    ) -> &mut Self {
        if text.len() + 1 + tail.0.len() > f.width {
            return self.refuse(f);
        }
        let mut bytes = Vec::with_capacity(f.width);
        bytes.extend_from_slice(text.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&tail.0);
        self.put_bytes(f, &bytes)
    }

    /// The bytes, or the first field whose value did not fit.
    pub fn finish(self) -> Result<Vec<u8>, Overflow> {
        match self.overflow {
            Some(field) => Err(Overflow { field }),
            None => Ok(self.bytes),
        }
    }
}
