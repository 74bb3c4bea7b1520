//! The graph a control is built from: tensors, sections, operations and patches, planned into
//! consistent records.

use super::*;

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
pub(super) const ENGINE_CYCLE: [u32; 4] = [op_type::NN, op_type::NN, op_type::TP, op_type::SH];

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
pub(super) fn split_table(bytes: usize, n: u32) -> Result<Vec<u8>, Overflow> {
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
pub(super) fn table_of(record: &fm::Record, records: &[(u32, u32)]) -> Result<Vec<u8>, Overflow> {
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
