//! Deterministic builder of synthetic v2 controls.
//!
//! The graphs the spec was written from are proprietary, so the lab makes its own: valid v2
//! images written in the producer's order (payloads, then the header CRC over normalized
//! payloads, then the section-40 values). Payload bytes come from SplitMix64 seeded by the
//! caller, implemented here so the bytes never change with a dependency's version.
//!
//! Sections whose record layout is public hold real, mutually consistent records (layers,
//! operations, SH operations, patches, and the coefficient / PPU-instruction / load-state index
//! tables), so the vendor's own reader walks them; command, coefficient, load-state and PPU
//! instruction payloads stay opaque seeded bytes.

use crate::nbg::crc_rules::{combine_v2_file_crc, v2_normalized_checksum_payload};
use crate::nbg::fieldmap::{self as fm, Overflow, Writer};
use crate::nbg::format::records::{self as rec, operation_type as op_type, source_type};
use crate::nbg::format::{MAGIC, V2_VERSION, section, v2 as f};

/// Why a build did not give an image: an unknown name, or a value that does not fit its field
/// (the field map's writer refuses it; the builder never truncates or zeroes it).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// No profile or capture set of that name.
    #[error("no builder profile or capture set is named `{0}`")]
    Unknown(String),
    /// A value the field map refused.
    #[error(transparent)]
    Overflow(#[from] Overflow),
    /// The writer failed (a streamed image only).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl BuildError {
    /// As an I/O error, for a caller that writes the image (a writer's own error unchanged).
    pub fn into_io(self) -> std::io::Error {
        match self {
            BuildError::Io(e) => e,
            e => std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
        }
    }
}

/// SplitMix64: tiny, fast and fixed forever, which is what a committed control needs.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose stream is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64-bit word of the stream.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (bias is irrelevant for test data).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// `n` bytes: the next words of the stream, little-endian, the last one cut short.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

/// One section as the builder lays it out.
#[derive(Clone, Debug, PartialEq)]
pub struct SectionSpec {
    /// Section type (`format::section`), written to the directory entry.
    pub kind: u32,
    /// Payload alignment in bytes (0 or 1: none), written to the directory entry.
    pub alignment: u32,
    /// Record size in bytes (1 for opaque payloads), written to the directory entry.
    pub entry_size: u32,
    /// The payload bytes.
    pub payload: Vec<u8>,
}

/// A whole image before emission: sections in directory order plus their file placement.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// The header's hardware target (offset 0x08, also called product or CID).
    pub target: u32,
    /// The sections in directory (type) order.
    pub sections: Vec<SectionSpec>,
    /// Directory indices in the order their payloads appear in the file.
    pub file_order: Vec<usize>,
    /// Extra padding bytes placed before each payload (indexed like `file_order`), on top of
    /// what the section's alignment requires.
    pub extra_gap: Vec<u64>,
    /// Bytes after the last payload that no section owns.
    pub tail: Vec<u8>,
}

/// A section payload generated while it is written, never held: `len` bytes of
/// `Rng::new(seed).bytes(len)`, for images larger than memory should hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// Directory index of the section it fills (its `payload` in the layout is ignored).
    pub section: usize,
    /// Payload size in bytes.
    pub len: u64,
    /// Seed of the `Rng` stream the payload is.
    pub seed: u64,
}

/// Bytes generated per write; a multiple of 8, so chunks continue the same word stream.
const GENERATE_CHUNK: usize = 4 << 20;

impl Generated {
    /// The whole payload in memory (what `Layout::write` streams).
    pub fn bytes(&self) -> Vec<u8> {
        Rng::new(self.seed).bytes(self.len as usize)
    }

    /// Feed the payload to `f` in chunks.
    fn each_chunk(&self, mut f: impl FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> {
        let mut rng = Rng::new(self.seed);
        let mut left = self.len;
        while left > 0 {
            let n = left.min(GENERATE_CHUNK as u64) as usize;
            f(&rng.bytes(n))?;
            left -= n as u64;
        }
        Ok(())
    }
}

impl Layout {
    /// Write the image in producer order and return its bytes.
    pub fn emit(&self) -> Result<Vec<u8>, BuildError> {
        let mut out = Vec::new();
        self.write(&mut out, None)?;
        Ok(out)
    }

    /// Write the image in producer order to `w`, streaming: memory is the header, directory
    /// and the held payloads, never the `generated` one.
    pub fn write(
        &self,
        w: &mut impl std::io::Write,
        generated: Option<&Generated>,
    ) -> Result<(), BuildError> {
        let n = self.sections.len();
        let is_generated = |i: usize| generated.filter(|g| g.section == i);
        let len =
            |i: usize| is_generated(i).map_or(self.sections[i].payload.len() as u64, |g| g.len);
        let crcs: Vec<u32> = (0..n)
            .map(|i| match is_generated(i) {
                Some(g) => {
                    let mut h = crc32fast::Hasher::new();
                    // Invariant: `each_chunk` fails only when its callback does, and this one
                    // always returns `Ok`.
                    g.each_chunk(|c| {
                        h.update(c);
                        Ok(())
                    })
                    .expect("hashing cannot fail");
                    h.finalize()
                }
                None => crc32fast::hash(&self.sections[i].payload),
            })
            .collect();
        let dir_offset = (f::HEADER_SIZE as u32) + f::SUB_HEADER_SIZE;
        let head_len = u64::from(dir_offset) + n as u64 * u64::from(f::SECTION_HEADER_SIZE);
        let mut cursor = head_len;
        let mut offsets = vec![0u64; n];
        for (pos, &i) in self.file_order.iter().enumerate() {
            let s = &self.sections[i];
            cursor += self.extra_gap.get(pos).copied().unwrap_or(0);
            if s.alignment > 1 {
                cursor = cursor.next_multiple_of(u64::from(s.alignment));
            }
            offsets[i] = cursor;
            cursor += len(i);
        }
        let total = cursor + self.tail.len() as u64;

        let mut image = Vec::with_capacity(head_len as usize);
        let sub = {
            use fm::v2_sub_header as sh;
            let mut w = Writer::new(sh::SIZE);
            w.put_u32(&sh::section_headers_offset, dir_offset)
                .put_u32(&sh::section_header_size, f::SECTION_HEADER_SIZE)
                .put_u32(&sh::section_header_count, n as u32);
            w.finish()?
        };
        for (i, s) in self.sections.iter().enumerate() {
            use fm::v2_section_header as sh;
            let mut w = Writer::new(sh::SIZE);
            w.put_u32(&sh::kind, s.kind)
                .put_uint(&sh::offset, offsets[i])
                .put_uint(&sh::size, len(i))
                .put_u32(&sh::alignment, s.alignment)
                .put_u32(&sh::entry_size, s.entry_size);
            image.extend_from_slice(&w.finish()?);
        }
        // Producer order: header CRC over normalized payloads, then the section-40 values.
        let listing: Vec<_> = (0..n)
            .map(|i| (self.sections[i].kind, offsets[i], len(i), crcs[i]))
            .collect();
        let crc = combine_v2_file_crc(&listing, |_, _| {
            let checksum = self.sections.iter().find(|s| s.kind == section::CHECKSUM);
            crc32fast::hash(&v2_normalized_checksum_payload(
                checksum.map_or(&[][..], |c| &c.payload),
            ))
        });
        let header = {
            use fm::v2_header as h;
            let mut w = Writer::new(h::SIZE);
            w.put_bytes(&h::magic, &MAGIC)
                .put_u32(&h::version, V2_VERSION)
                .put_u32(&h::target, self.target)
                .put_u32(&h::crc_sum, crc)
                .put_u32(&h::total_size_low, total as u32)
                .put_u32(&h::total_size_high, (total >> 32) as u32)
                .put_u32(&h::sub_header_offset, f::HEADER_SIZE as u32)
                .put_u32(&h::sub_header_size, f::SUB_HEADER_SIZE)
                .put_u32(&h::sub_header_count, f::SUB_HEADER_COUNT);
            w.finish()?
        };
        w.write_all(&header)?;
        w.write_all(&sub)?;
        w.write_all(&image)?;

        let mut written = head_len;
        for &i in &self.file_order {
            let s = &self.sections[i];
            write_zeros(w, offsets[i] - written)?;
            match is_generated(i) {
                Some(g) => g.each_chunk(|c| w.write_all(c))?,
                None if s.kind == section::CHECKSUM => {
                    use fm::v2_checksum_record as c;
                    let mut payload = s.payload.clone();
                    for r in payload.chunks_exact_mut(c::SIZE) {
                        let Some(v) = fm::View::new(&c::RECORD, r) else {
                            continue;
                        };
                        let kind = v.u32(&c::section_type);
                        if let Some(t) = self.sections.iter().position(|s| s.kind == kind) {
                            r[c::checksum_value.offset..c::checksum_value.end()]
                                .copy_from_slice(&crcs[t].to_le_bytes());
                        }
                    }
                    w.write_all(&payload)?;
                }
                None => w.write_all(&s.payload)?,
            }
            written = offsets[i] + len(i);
        }
        Ok(w.write_all(&self.tail)?)
    }
}

fn write_zeros(w: &mut impl std::io::Write, mut n: u64) -> std::io::Result<()> {
    const ZEROS: [u8; 4096] = [0; 4096];
    while n > 0 {
        let k = n.min(ZEROS.len() as u64) as usize;
        w.write_all(&ZEROS[..k])?;
        n -= k as u64;
    }
    Ok(())
}

/// An I/O tensor as the builder writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec {
    /// The record's tensor name.
    pub name: String,
    /// Dimensions, innermost first (the record's dimension count is their number).
    pub dims: Vec<u32>,
    /// The record's data format word.
    pub format: u32,
    /// The record's data type word.
    pub data_type: u32,
    /// The record's quantization format word.
    pub quant_format: u32,
    /// The record's two quantization words.
    pub quant_words: [u32; 2],
}

impl TensorSpec {
    /// An unquantized tensor of data type 0.
    pub fn new(name: &str, dims: &[u32], format: u32) -> Self {
        TensorSpec {
            name: name.into(),
            dims: dims.to_vec(),
            format,
            data_type: 0,
            quant_format: 0,
            quant_words: [0, 0],
        }
    }

    fn record(&self) -> Result<Vec<u8>, Overflow> {
        use fm::v2_io_record as io;
        let mut w = Writer::new(io::SIZE);
        w.put_u32(&io::dimension_count, self.dims.len() as u32)
            .put_words(&io::dimensions, &self.dims)
            .put_u32(&io::data_format, self.format)
            .put_u32(&io::data_type, self.data_type)
            .put_u32(&io::quant_format, self.quant_format)
            .put_words(&io::quant_words, &self.quant_words)
            .put_str(&io::name, &self.name);
        w.finish()
    }
}

/// What a synthetic graph contains; `Graph::layout` turns it into sections.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphSpec {
    /// The header's hardware target (offset 0x08).
    pub target: u32,
    /// The network name in NETWORK_INFO.
    pub network_name: String,
    /// Records of the INPUT section.
    pub inputs: Vec<TensorSpec>,
    /// Records of the OUTPUT section.
    pub outputs: Vec<TensorSpec>,
    /// Records of the LAYER section.
    pub layers: u32,
    /// Records of the OPERATIONS section: an INIT operation, then engine operations spread over
    /// the layers (a graph without layers holds the INIT operation only; see `GraphSpec::plan`).
    pub operations: u32,
    /// Bytes of the PPU_INSTR payload (seeded, opaque).
    pub ppu_bytes: usize,
    /// Bytes of the LOADSTATE payload (seeded, opaque).
    pub loadstate_bytes: usize,
    /// Bytes of the COEF_DATA payload (seeded, opaque).
    pub coef_bytes: usize,
    /// The MEMORY_POOL section's size word, in bytes.
    pub memory_pool_bytes: u64,
    /// The VIP_SRAM section's size word, in bytes.
    pub vip_sram_bytes: u32,
    /// DYNAIO entry payloads; `None` leaves sections 20/26 out.
    pub dynaio: Option<Vec<Vec<u8>>>,
}

/// Sections whose CRC-32 the producer records in section 40.
pub const CHECKSUMMED: [u32; 5] = [
    section::NN,
    section::TP,
    section::PPU_INSTR,
    section::LOADSTATE,
    section::COEF_DATA,
];

impl GraphSpec {
    /// Sections in directory (type) order with seeded opaque payloads.
    pub fn layout(&self, rng: &mut Rng) -> Result<Layout, Overflow> {
        let mut sections = Vec::new();
        let mut add = |kind, alignment, entry_size, payload: Vec<u8>| {
            sections.push(SectionSpec {
                kind,
                alignment,
                entry_size,
                payload,
            });
        };
        let io = |t: &[TensorSpec]| -> Result<Vec<u8>, Overflow> {
            Ok(t.iter()
                .map(TensorSpec::record)
                .collect::<Result<Vec<_>, _>>()?
                .concat())
        };
        let plan = self.plan();
        add(section::INPUT, 0, 112, io(&self.inputs)?);
        add(section::OUTPUT, 0, 112, io(&self.outputs)?);
        add(section::LAYER, 0, 76, plan.layer_records()?);
        add(section::OPERATIONS, 0, 32, plan.operation_records()?);
        add(section::NN, 0, 192, rng.bytes(192 * plan.nn as usize));
        add(section::TP, 0, 192, rng.bytes(192 * plan.tp as usize));
        add(section::SH, 0, 8, plan.sh_records()?);
        add(section::PATCH, 0, 28, plan.patch_records()?);
        add(section::PPU_INSTR, 256, 1, rng.bytes(self.ppu_bytes));
        // DYNAIO, when present, sits in type order: the region after the PPU instructions, its
        // table after the PPU instruction table.
        let dynaio = self.dynaio.as_deref().map(dynaio_region).transpose()?;
        if let Some((region, _)) = &dynaio {
            add(section::DYNAIO, 64, 1, region.clone());
        }
        add(section::LOADSTATE, 0, 1, rng.bytes(self.loadstate_bytes));
        add(
            section::COEF_DATA_TABLE,
            0,
            8,
            split_table(self.coef_bytes, plan.nn.max(1))?,
        );
        add(section::COEF_DATA, 64, 1, rng.bytes(self.coef_bytes));
        add(
            section::PPU_INSTR_TABLE,
            0,
            8,
            split_table(self.ppu_bytes, plan.sh + 1)?,
        );
        if let Some((_, table)) = dynaio {
            add(section::DYNAIO_TABLE, 0, 8, table);
        }
        add(
            section::LOADSTATE_TABLE,
            0,
            8,
            split_table(self.loadstate_bytes, plan.operations.len().max(1) as u32)?,
        );
        add(
            section::NETWORK_INFO,
            0,
            220,
            self.network_info(&plan, rng)?,
        );
        let mut pool = self.memory_pool_bytes.to_le_bytes().to_vec();
        pool.truncate(8);
        add(section::MEMORY_POOL, 0, 8, pool);
        add(
            section::VIP_SRAM,
            0,
            4,
            self.vip_sram_bytes.to_le_bytes().to_vec(),
        );
        add(
            section::CHECKSUM,
            0,
            8,
            table_of(
                &fm::v2_checksum_record::RECORD,
                &CHECKSUMMED.map(|k| (k, 0)),
            )?,
        );
        let n = sections.len();
        Ok(Layout {
            target: self.target,
            sections,
            file_order: (0..n).collect(),
            extra_gap: vec![0; n],
            tail: Vec::new(),
        })
    }

    fn network_info(&self, plan: &Plan, rng: &mut Rng) -> Result<Vec<u8>, Overflow> {
        let ops = plan.operations.len() as u32;
        use fm::v2_network_info as ni;
        let mut w = Writer::new(ni::SIZE);
        w.put_str(&ni::name, &self.network_name)
            .put_u32(&ni::input_count, self.inputs.len() as u32)
            .put_u32(&ni::output_count, self.outputs.len() as u32)
            .put_u32(&ni::layer_count, self.layers)
            // Absolute operations: the engine operations (the spec's CTC graph: 5 of 6 records).
            .put_u32(&ni::absolute_operation_count, ops.saturating_sub(1))
            // The corpus relation: saved operation records = operation_count - 3.
            .put_u32(&ni::operation_count, ops + 3)
            .put_u32(&ni::core_count, 1)
            .put_u32(&ni::address_width, 32)
            // NN and TP command size code 1 (192-byte commands).
            .put_parts(&ni::attribute, &[0, 1, 1, 0, 0])
            // One vendor-reserved word, as the corpus shows 1-2 nonzero words.
            .put_words(&ni::vsi_reserved, &[rng.next_u64() as u32 | 1]);
        w.finish()
    }
}

/// Engine of the k-th engine operation: NN-heavy, like the public graphs.
const ENGINE_CYCLE: [u32; 4] = [op_type::NN, op_type::NN, op_type::TP, op_type::SH];

/// One operation record as the builder writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperationSpec {
    /// Operation type (`format::records::operation_type`: INIT, NN, TP, SH).
    pub kind: u32,
    /// Position within its engine's records (NN/TP command, SH record); 0xffff for INIT.
    pub engine_index: u32,
    /// The layer it belongs to (0xffff for INIT).
    pub layer_id: u32,
    /// Its index in the load-state table.
    pub state_id: u32,
    /// First record of its patch range in the PATCH section.
    pub patch_index: u32,
    /// Records in its patch range.
    pub patch_count: u32,
    /// The record's absolute operation id word.
    pub abs_op_id: u32,
}

/// One patch record: (source type, signed index, src offset, dest offset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatchSpec {
    /// What the patch reads from (`format::records::source_type`).
    pub source_type: u32,
    /// The record's signed index word (which input, output or region of the source type).
    pub index: i32,
    /// The record's source offset word.
    pub src_offset: u32,
    /// The record's destination offset word.
    pub dest_offset: u32,
}

/// The records of a graph, consistent with each other and with the network-info counts:
/// every operation names an existing layer (INIT names none), its patch range lies in the
/// patch table, its state id indexes the load-state table, NN/TP/SH indices are below their
/// record counts, SH records index the PPU instruction table, and each layer's operation count
/// is the number of operations that name it.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// LAYER records: (name, id, operation count, uid).
    pub layers: Vec<(String, u32, u32, u32)>,
    /// OPERATIONS records, the INIT operation first.
    pub operations: Vec<OperationSpec>,
    /// PATCH records.
    pub patches: Vec<PatchSpec>,
    /// NN commands (192 bytes each) in the NN section.
    pub nn: u32,
    /// TP commands (192 bytes each) in the TP section.
    pub tp: u32,
    /// SH records in the SH section.
    pub sh: u32,
}

impl GraphSpec {
    /// Layers, operations, SH records and patches for this spec.
    pub fn plan(&self) -> Plan {
        let layer_count = self.layers;
        let engine_ops = if layer_count == 0 {
            0
        } else {
            self.operations.saturating_sub(1)
        };
        let mut operations = Vec::new();
        let mut patches = Vec::new();
        if self.operations > 0 {
            operations.push(OperationSpec {
                kind: op_type::INIT,
                engine_index: 0xffff,
                layer_id: rec::NO_LAYER,
                state_id: 0,
                patch_index: 0,
                patch_count: 1,
                abs_op_id: u32::MAX,
            });
            patches.push(PatchSpec {
                source_type: source_type::COMMAND,
                index: -1,
                src_offset: 0,
                dest_offset: 0,
            });
        }
        let (mut nn, mut tp, mut sh) = (0u32, 0u32, 0u32);
        let mut per_layer = vec![0u32; layer_count as usize];
        for k in 0..engine_ops {
            let kind = ENGINE_CYCLE[k as usize % ENGINE_CYCLE.len()];
            let counter = match kind {
                op_type::NN => &mut nn,
                op_type::TP => &mut tp,
                _ => &mut sh,
            };
            let engine_index = *counter;
            *counter += 1;
            // Spread the operations over the layers in order; with fewer operations than
            // layers, the trailing layers hold none.
            let layer_id = if engine_ops >= layer_count {
                (u64::from(k) * u64::from(layer_count) / u64::from(engine_ops)) as u32
            } else {
                k
            };
            per_layer[layer_id as usize] += 1;
            let second = if k == 0 && !self.inputs.is_empty() {
                (source_type::INPUT, 0)
            } else if k + 1 == engine_ops && !self.outputs.is_empty() {
                (source_type::OUTPUT, 0)
            } else {
                (source_type::COMMAND, -1)
            };
            operations.push(OperationSpec {
                kind,
                engine_index,
                layer_id,
                state_id: k + 1,
                patch_index: patches.len() as u32,
                patch_count: 2,
                abs_op_id: k,
            });
            patches.push(PatchSpec {
                source_type: source_type::MEMORY_POOL,
                index: -1,
                src_offset: 64 * k,
                dest_offset: 4,
            });
            patches.push(PatchSpec {
                source_type: second.0,
                index: second.1,
                src_offset: 0,
                dest_offset: 8,
            });
        }
        let layers = per_layer
            .iter()
            .enumerate()
            .map(|(i, &count)| {
                let first = operations.iter().find(|o| o.layer_id == i as u32);
                let name = match first.map(|o| o.kind) {
                    Some(op_type::NN) => "ConvolutionReluLayer",
                    Some(op_type::TP) => "TensorCopy",
                    Some(op_type::SH) => "Softmax2Layer",
                    _ => "NoOpLayer",
                };
                (format!("{name}_{i}"), i as u32, count, 2 * i as u32 + 1)
            })
            .collect();
        Plan {
            layers,
            operations,
            patches,
            nn,
            tp,
            sh,
        }
    }
}

impl Plan {
    fn layer_records(&self) -> Result<Vec<u8>, Overflow> {
        use fm::layer as l;
        let mut out = Vec::new();
        for (name, id, count, uid) in &self.layers {
            let mut w = Writer::new(l::SIZE);
            w.put_str(&l::name, name)
                .put_u32(&l::id, *id)
                .put_u32(&l::operation_count, *count)
                .put_u32(&l::uid, *uid);
            out.extend_from_slice(&w.finish()?);
        }
        Ok(out)
    }

    fn operation_records(&self) -> Result<Vec<u8>, Overflow> {
        use fm::operation as o;
        let mut out = Vec::new();
        for op in &self.operations {
            let mut w = Writer::new(o::SIZE);
            w.put_u32(&o::kind, op.kind)
                .put_u32(&o::index, op.engine_index)
                .put_u32(&o::layer_id, op.layer_id)
                .put_u32(&o::state_id, op.state_id)
                .put_u32(&o::patch_index, op.patch_index)
                .put_u32(&o::patch_count, op.patch_count)
                .put_u32(&o::abs_op_id, op.abs_op_id);
            out.extend_from_slice(&w.finish()?);
        }
        Ok(out)
    }

    /// SH record j indexes PPU instruction-table entry j + 1 (entry 0 is a program no SH
    /// operation uses, so no SH record is all zero: a zero record beside zero gap bytes would let
    /// a moved section offset read identical bytes); no PPU parameter section exists.
    fn sh_records(&self) -> Result<Vec<u8>, Overflow> {
        use fm::sh_operation as sh;
        let mut out = Vec::new();
        for j in 0..self.sh {
            let mut w = Writer::new(sh::SIZE);
            w.put_u32(&sh::instr_index, j + 1);
            out.extend_from_slice(&w.finish()?);
        }
        Ok(out)
    }

    fn patch_records(&self) -> Result<Vec<u8>, Overflow> {
        use fm::patch as p;
        let mut out = Vec::new();
        for patch in &self.patches {
            let mut w = Writer::new(p::SIZE);
            w.put_u32(&p::dest_offset, patch.dest_offset)
                .put_u32(&p::source_type, patch.source_type)
                .put_u32(&p::index, patch.index as u32)
                .put_u32(&p::src_offset, patch.src_offset);
            out.extend_from_slice(&w.finish()?);
        }
        Ok(out)
    }
}

/// `n` (offset, size) records splitting `bytes` in order, in 8-byte multiples (command
/// streams are word pairs); the last takes the remainder.
fn split_table(bytes: usize, n: u32) -> Result<Vec<u8>, Overflow> {
    let chunk = (bytes as u32 / n) & !7;
    table_of(
        &fm::v1_entry::RECORD,
        &(0..n)
            .map(|i| {
                let size = if i + 1 == n {
                    bytes as u32 - chunk * i
                } else {
                    chunk
                };
                (chunk * i, size)
            })
            .collect::<Vec<_>>(),
    )
}

/// Records of a two-word layout of the field map (checksum record, DYNAIO entry, the (offset,
/// size) entry both public headers define), each (first field, second field), written through
/// it.
fn table_of(record: &fm::Record, records: &[(u32, u32)]) -> Result<Vec<u8>, Overflow> {
    let [first, second] = [&record.fields[0], &record.fields[1]];
    let mut out = Vec::with_capacity(records.len() * record.size);
    for &(a, b) in records {
        let mut w = Writer::new(record.size);
        w.put_u32(first, a).put_u32(second, b);
        out.extend_from_slice(&w.finish()?);
    }
    Ok(out)
}

/// The DYNAIO region (entries at 64-byte offsets, zero padding) and its table.
pub fn dynaio_region(entries: &[Vec<u8>]) -> Result<(Vec<u8>, Vec<u8>), Overflow> {
    let mut region = Vec::new();
    let mut records = Vec::new();
    for e in entries {
        records.push((region.len() as u32, e.len() as u32));
        region.extend_from_slice(e);
        region.resize(region.len().next_multiple_of(64), 0);
    }
    Ok((region, table_of(&fm::v2_dynaio_entry::RECORD, &records)?))
}

/// Named profiles of the committed controls.
pub const PROFILES: [&str; 5] = [
    "erf-u8",
    "ctc-like",
    "zipformer-like",
    "tail-gap",
    "shuffled",
];

/// The `GraphSpec` and file placement of a named profile.
pub fn profile(name: &str, seed: u64) -> Result<Layout, BuildError> {
    let mut rng = Rng::new(seed);
    let base = |name: &str, inputs, outputs| GraphSpec {
        target: 0x1000_000e,
        network_name: name.into(),
        inputs,
        outputs,
        layers: 4,
        operations: 5,
        ppu_bytes: 256,
        loadstate_bytes: 320,
        coef_bytes: 1024,
        memory_pool_bytes: 161_280,
        vip_sram_bytes: 262_144,
        dynaio: None,
    };
    let u8_481 = || vec![TensorSpec::new("input_0", &[481], 2)];
    let layout = match name {
        "erf-u8" => {
            let mut g = base(
                "erf_u8",
                u8_481(),
                vec![TensorSpec::new("output_0", &[481], 2)],
            );
            g.outputs[0].quant_format = 2;
            g.outputs[0].quant_words = [(1.0f32 / 255.0).to_bits(), 128];
            g.layout(&mut rng)?
        }
        "ctc-like" => {
            let mut g = base(
                "ctc_like_NCHW",
                vec![TensorSpec::new("input/output[0]", &[256, 16, 1], 1)],
                vec![TensorSpec::new(
                    "uid_20000_sub_uid_1_out_0",
                    &[5200, 16, 1],
                    0,
                )],
            );
            g.layers = 5;
            g.operations = 6;
            g.memory_pool_bytes = 167_680;
            g.coef_bytes = 8192;
            g.dynaio = Some(dynaio_entries(&mut rng, 50));
            g.layout(&mut rng)?
        }
        "zipformer-like" => {
            let io = |prefix: &str, n: usize| -> Vec<TensorSpec> {
                (0..n)
                    .map(|i| {
                        let dims = [1 + (i as u32 % 7) * 16, 1 + i as u32 % 3, 1];
                        TensorSpec::new(
                            &format!("{prefix}_{i}"),
                            &dims,
                            if i % 5 == 0 { 8 } else { 1 },
                        )
                    })
                    .collect()
            };
            let mut g = base("zipformer_like", io("in", 75), io("out", 75));
            g.layers = 40;
            g.operations = 64;
            g.dynaio = Some(dynaio_entries(&mut rng, 150));
            g.layout(&mut rng)?
        }
        "tail-gap" => {
            let g = base(
                "tail_gap",
                u8_481(),
                vec![TensorSpec::new("output_0", &[481], 2)],
            );
            let mut l = g.layout(&mut rng)?;
            // More than 512 unowned bytes, so no section covers the connection region.
            l.tail = rng.bytes(640);
            l
        }
        "shuffled" => {
            let mut g = base(
                "shuffled",
                vec![TensorSpec::new("in", &[1, 3, 32, 32], 3)],
                vec![TensorSpec::new("out", &[1, 10], 0)],
            );
            g.inputs[0].quant_format = 1;
            g.inputs[0].quant_words = [7, 0];
            g.dynaio = Some(dynaio_entries(&mut rng, 8));
            let mut l = g.layout(&mut rng)?;
            shuffle(&mut rng, &mut l.file_order);
            l.extra_gap = (0..l.sections.len()).map(|_| rng.range(0, 3) * 4).collect();
            l
        }
        _ => return Err(BuildError::Unknown(name.into())),
    };
    Ok(layout)
}

/// `n` DYNAIO entries; entry 0 is the 4-byte constant `[0, 1, 2, 3]` of the spec's differential.
pub fn dynaio_entries(rng: &mut Rng, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| match i {
            0 => vec![0, 1, 2, 3],
            _ => {
                let len = rng.range(1, 200) as usize;
                rng.bytes(len)
            }
        })
        .collect()
}

/// Fisher-Yates with the builder's generator.
pub fn shuffle<T>(rng: &mut Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = rng.range(0, i as u64) as usize;
        items.swap(i, j);
    }
}

/// A controlled serializer differential built with the builder: A (captured twice) and B differ
/// only in the source bytes of one DYNAIO entry, unless the trio is a negative control.
pub struct Trio {
    /// A's image (`A1.nb` and `A2.nb`).
    pub a: Vec<u8>,
    /// B's image.
    pub b: Vec<u8>,
    /// The DYNAIO entry's bytes in A.
    pub a_source: Vec<u8>,
    /// The same entry's bytes in B.
    pub b_source: Vec<u8>,
    /// How the trio was built, in words (for `differential.json`).
    pub provenance: String,
}

/// Committed capture sets under `differentials/NAME/`.
pub const TRIOS: [&str; 4] = [
    "dynaio-constant",
    "dynaio-later-entry",
    "dynaio-multi-byte",
    "negative-outside-dynaio",
];

/// Seed of the `ctc-like` base graph every trio starts from.
pub const TRIO_SEED: u64 = 12;

/// Build a named trio.
pub fn trio(name: &str) -> Result<Trio, BuildError> {
    let unknown = || BuildError::Unknown(name.into());
    let base = profile("ctc-like", TRIO_SEED)?;
    // (entry, [(source index, new value)], also change an NN byte)
    let (entry, changes, outside): (usize, &[(usize, u8)], bool) = match name {
        "dynaio-constant" => (0, &[(3, 4)], false),
        "dynaio-later-entry" => (17, &[(5, 0x5a)], false),
        "dynaio-multi-byte" => (3, &[(0, 0xee), (2, 0x00), (7, 0x80)], false),
        "negative-outside-dynaio" => (0, &[(3, 4)], true),
        _ => return Err(unknown()),
    };
    // The entries and bytes below exist in the ctc-like base (50 entries); a miss is reported
    // as the trio being unknown to this base rather than a panic.
    let (start, len) = entry_range(&base, entry).ok_or_else(unknown)?;
    let region = |l: &Layout| -> Option<Vec<u8>> {
        let r = l.sections.iter().find(|s| s.kind == section::DYNAIO)?;
        r.payload.get(start..start + len).map(<[u8]>::to_vec)
    };
    let a_source = region(&base).ok_or_else(unknown)?;
    let mut changed = base.clone();
    {
        let r = changed
            .sections
            .iter_mut()
            .find(|s| s.kind == section::DYNAIO)
            .ok_or_else(unknown)?;
        for &(i, v) in changes {
            *r.payload.get_mut(start + i).ok_or_else(unknown)? = v;
        }
    }
    if outside {
        let nn = changed
            .sections
            .iter_mut()
            .find(|s| s.kind == section::NN)
            .ok_or_else(unknown)?;
        *nn.payload.first_mut().ok_or_else(unknown)? ^= 0x01;
    }
    let b_source = region(&changed).ok_or_else(unknown)?;
    let what = changes
        .iter()
        .map(|(i, v)| format!("[{i}]=0x{v:02x}"))
        .collect::<Vec<_>>()
        .join(", ");
    let provenance = format!(
        "nbg-lab synth: ctc-like seed {TRIO_SEED}; B sets DYNAIO entry {entry} source {what}{}",
        if outside {
            "; B also flips bit 0 of NBG_SECTION_NN byte 0 (negative control)"
        } else {
            ""
        }
    );
    Ok(Trio {
        a: base.emit()?,
        b: changed.emit()?,
        a_source,
        b_source,
        provenance,
    })
}

/// Region-relative (offset, size) of a DYNAIO entry, from the layout's table section; `None`
/// when the layout has no such entry.
fn entry_range(l: &Layout, entry: usize) -> Option<(usize, usize)> {
    let t = l
        .sections
        .iter()
        .find(|s| s.kind == section::DYNAIO_TABLE)?;
    let r = t.payload.get(entry * 8..entry * 8 + 8)?;
    let word = |i: usize| -> Option<usize> {
        let bytes: [u8; 4] = r.get(i..i + 4)?.try_into().ok()?;
        Some(u32::from_le_bytes(bytes) as usize)
    };
    Some((word(0)?, word(4)?))
}

/// A large graph for benchmarks: the `ctc-like` shape with a coefficient section of about
/// `bytes` bytes (payload from SplitMix64 seeded by `seed`), at most `MAX_BULK_BYTES`.
pub fn bulk(seed: u64, bytes: u64) -> Result<Layout, BuildError> {
    let (mut l, g) = bulk_streamed(seed, bytes)?;
    l.sections[g.section].payload = g.bytes();
    Ok(l)
}

/// Bytes of the largest bulk graph: its coefficient table records sizes in 32 bits.
pub const MAX_BULK_BYTES: u64 = u32::MAX as u64 + BULK_OTHER_BYTES;
const BULK_OTHER_BYTES: u64 = 20_000;

/// `bulk` with the coefficient payload left to generate while writing (`Layout::write`).
pub fn bulk_streamed(seed: u64, bytes: u64) -> Result<(Layout, Generated), BuildError> {
    // Invariant: every `GraphSpec::layout` adds COEF_DATA and COEF_DATA_TABLE unconditionally.
    let mut l = profile("ctc-like", seed)?;
    let section = l
        .sections
        .iter()
        .position(|s| s.kind == section::COEF_DATA)
        .expect("coefficients");
    l.sections[section].payload.clear();
    let generated = Generated {
        section,
        len: bytes.saturating_sub(BULK_OTHER_BYTES),
        seed: seed ^ 0xb01c,
    };
    let len = generated.len as u32;
    let table = l
        .sections
        .iter_mut()
        // Invariant: see above; COEF_DATA_TABLE is always added.
        .find(|s| s.kind == section::COEF_DATA_TABLE)
        .expect("table");
    table.payload = table_of(&fm::v1_entry::RECORD, &[(0, len)])?;
    Ok((l, generated))
}
