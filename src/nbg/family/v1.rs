//! `NbgFamily` for a v1 graph.

use super::*;

impl<'data> NbgFamily<'data> for NbgV1<'data> {
    fn family(&self) -> Family {
        Family::V1
    }

    fn bytes(&self) -> &'data [u8] {
        self.bytes
    }

    fn format(&self) -> &'static str {
        self.format
    }

    fn version(&self) -> u32 {
        self.header.version
    }

    fn target(&self) -> u32 {
        self.header.target
    }

    fn file(&self) -> &FileFacts {
        &self.file
    }

    fn structural_signature(&self) -> Hash256 {
        self.structural_signature
    }

    fn to_json(&self) -> serde_json::Value {
        model_json(self, self.target())
    }

    fn descriptors(&self) -> Vec<String> {
        self.tables
            .iter()
            .map(|t| {
                format!(
                    "table {} {} offset {} size {}",
                    t.index, t.name, t.offset, t.size
                )
            })
            .collect()
    }

    fn payloads(&self) -> Vec<Payload> {
        self.tables
            .iter()
            .map(|t| Payload {
                name: t.name,
                offset: t.offset,
                size: t.size,
            })
            .collect()
    }

    fn crc_rule(&self) -> CrcRule {
        CrcRule {
            field: f1::OFF_CRC as u64,
            rule: crc_rules::WHOLE_FILE_FIELD_ZEROED,
            field_name: "nbg_crc_sum",
        }
    }

    fn crc_class(&self) -> Option<CrcClass> {
        Some(self.crc.classification)
    }

    fn file_crc(&self, bytes: &[u8]) -> Option<u32> {
        if self.crc.stored == 0 || bytes.len() as u64 != self.file.size {
            return None;
        }
        Some(crc_rules::whole_file_field_zeroed(
            bytes,
            f1::OFF_CRC as u64,
        ))
    }

    fn derived_checksums(&self) -> Vec<DerivedChecksum> {
        Vec::new()
    }

    fn checksum_table(&self) -> Option<(u64, u64)> {
        None
    }

    fn coverage_code(&self, _offset: u64) -> Option<&'static str> {
        // A matching whole-file CRC covers every byte; the parser reports a mismatch as a
        // classification, not a failure, so the sweep names the code itself.
        (self.crc.classification == CrcClass::Matches)
            .then_some(crate::nbg::failure::Code::CrcFieldUnexplained.as_str())
    }

    fn unchecked_reason(&self, _offset: u64, _place: Place) -> Option<&'static str> {
        match self.crc.classification {
            CrcClass::Absent => Some("v1 file without a CRC: the byte is not checked"),
            CrcClass::Unexplained => {
                Some("v1 CRC field unexplained by every rule: the byte is not checked")
            }
            _ => None,
        }
    }

    fn unknown_field_bytes(&self) -> u64 {
        use crate::nbg::parse::command_tables::unknown_bytes;
        let of = |name: &str, records: usize| {
            self.table(name)
                .and_then(|t| crate::nbg::holds::v1(name)?.record(t.record_size?))
                .map_or(0, |r| records as u64 * unknown_bytes(&r))
        };
        use crate::nbg::parse::patch_targets::unknown_region_bytes;
        of("nn", self.nn_commands.as_ref().map_or(0, Vec::len))
            + of("tp", self.tp_commands.as_ref().map_or(0, Vec::len))
            + unknown_region_bytes(self.lcd_regions.as_deref())
            + unknown_region_bytes(self.icd_regions.as_deref())
            + unknown_region_bytes(self.coeff_regions.as_deref())
            + unknown_region_bytes(self.load_states_regions.as_deref())
            + unknown_region_bytes(self.ppu_instr_regions.as_deref())
    }

    fn patch_targets(&self) -> Option<crate::nbg::parse::patch_targets::PatchTargets> {
        Some(crate::nbg::parse::patch_targets::resolve(
            &self.patch_context()?,
        ))
    }

    fn coefficient_view(&self) -> crate::nbg::parse::patch_targets::CoefficientView<'_> {
        crate::nbg::parse::patch_targets::CoefficientView {
            bytes: self.bytes,
            target: self.target(),
            commands: self.nn_commands.as_deref().unwrap_or(&[]),
            tp: self.tp_commands.as_deref().unwrap_or(&[]),
            regions: self.regions_of(self.coefficient_table()).0.unwrap_or(&[]),
            records: &self.records,
            context: self.patch_context(),
        }
    }

    fn dynaio_region(&self) -> Option<u64> {
        self.table("dyna_io")
            .filter(|t| t.size > 0)
            .map(|t| t.offset)
    }

    fn inputs(&self) -> &[crate::nbg::parse::IoRecord] {
        &self.inputs
    }

    fn outputs(&self) -> &[crate::nbg::parse::IoRecord] {
        &self.outputs
    }

    fn network(&self) -> Option<Network<'_>> {
        let h = &self.header;
        Some(Network {
            name: &h.network_name,
            layers: h.layer_count,
            operations: h.operation_count,
            cores: None,
        })
    }

    fn corpus_invariants(&self) -> &[crate::nbg::parse::invariants::Invariant] {
        &self.corpus_invariants
    }

    fn records(&self) -> &crate::nbg::parse::records::Records {
        &self.records
    }

    fn memory(&self) -> DeclaredMemory {
        DeclaredMemory {
            pool_bytes: Some(self.memory_pool_bytes),
            axi_sram_bytes: Some(self.axi_sram_bytes),
            vip_sram_bytes: self.vip_sram_bytes,
        }
    }

    fn layout_evidence(&self) -> Option<crate::nbg::format::v1::LayoutEvidence> {
        Some(self.fixed_part.evidence)
    }

    fn crc_summary(&self) -> CrcSummary {
        CrcSummary {
            status: self.crc.classification,
            rule: self.crc.rule.clone(),
            stored: self.crc.stored,
            offset: self.crc.offset,
        }
    }

    fn layout(&self) -> Layout<'_> {
        Layout::Tables {
            fixed: &self.fixed_part,
            extension: &self.opaque_fixed_extension,
            tables: &self.tables,
        }
    }

    fn integrity(&self) -> Integrity<'_> {
        Integrity::CrcField {
            crc: &self.crc,
            nested: &self.nested_tables,
        }
    }

    fn connection_region(&self) -> &crate::nbg::parse::ConnectionRegion {
        &self.connection_region
    }

    fn claims<'a>(&self, read: &Read<'a>) -> Vec<Claim> {
        claims::v1(self, read)
    }

    fn views(&self) -> Vec<View> {
        claims::views_v1(self)
    }

    fn pieces<'a>(&self, o: &Owner, read: &Read<'a>) -> Option<Vec<Piece>> {
        pieces::v1(self, o, read)
    }

    fn coefficient_pieces<'a>(&self, read: &Read<'a>) -> super::CoefficientPieces {
        let name = self.coefficient_table();
        let Some(t) = self.tables.iter().find(|t| t.name == name) else {
            return Default::default();
        };
        pieces::coefficient_parts(&self.coefficient_view(), read, name, None)
            .into_iter()
            .map(|((e, part), p)| ((t.index, e, part), p))
            .collect()
    }

    fn payload_name(&self, origin: Origin) -> Option<&str> {
        match origin {
            Origin::Table(i) => self.tables.get(i).map(|t| t.name),
            _ => None,
        }
    }

    fn located(&self, o: &Owner, offset: u64) -> Located {
        naming::v1(self, &naming::At::new(o, offset))
    }

    fn owner_content(&self, origin: &Origin) -> crate::nbg::format::Content {
        // A v1 table's content is that of the v2 section of the same kind (table k is type k+1).
        match origin {
            Origin::Table(k) | Origin::TableEntry(k, _) | Origin::Coefficient(k, _, _) => {
                u32::try_from(*k)
                    .ok()
                    .and_then(|k| k.checked_add(1))
                    .map_or(
                        crate::nbg::format::Content::Other,
                        crate::nbg::format::section::content,
                    )
            }
            _ => crate::nbg::format::Content::Other,
        }
    }

    fn dynaio_ranges(&self) -> Vec<(u64, u64)> {
        let region = self.table("dyna_io").map_or(0, |t| t.offset);
        self.nested_tables
            .iter()
            .find(|n| n.table == "dyna_io_table")
            .map_or_else(Vec::new, |n| {
                n.entries
                    .iter()
                    .map(|e| (region + e[0], region + e[0] + e[1]))
                    .collect()
            })
    }

    fn crc_explanation(&self, crc_of: &mut dyn FnMut(u64, u64) -> u32) -> Explanation {
        super::crc::explain_v1(self, crc_of)
    }

    fn recheck_records(
        &self,
        data: crate::nbg::read::Data<'_>,
    ) -> Result<(), crate::nbg::failure::Failure> {
        NbgV1::recheck_records(self, data)
    }

    fn crc_flips(
        &self,
        crc_of: &mut dyn FnMut(u64, u64) -> u32,
        patterns: &[u8],
    ) -> Option<crc_rules::CrcFlips> {
        if self.crc.stored == 0 {
            return Some(crc_rules::CrcFlips::Absent);
        }
        super::crc::flips_v1(self, crc_of, patterns).map(crc_rules::CrcFlips::Registry)
    }
}
