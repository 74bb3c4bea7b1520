//! `NbgFamily` for either graph, dispatched once.

use super::*;

/// Forward a call to the graph's family: the one match on `Graph` variants.
macro_rules! with_family {
    ($graph:expr, $g:ident => $body:expr) => {
        match $graph {
            Graph::V1($g) => $body,
            Graph::V2($g) => $body,
        }
    };
}

impl<'data> NbgFamily<'data> for Graph<'data> {
    fn family(&self) -> Family {
        with_family!(self, g => g.family())
    }

    fn bytes(&self) -> &'data [u8] {
        with_family!(self, g => g.bytes())
    }

    fn format(&self) -> &'static str {
        with_family!(self, g => g.format())
    }

    fn version(&self) -> u32 {
        with_family!(self, g => g.version())
    }

    fn target(&self) -> u32 {
        with_family!(self, g => g.target())
    }

    fn file(&self) -> &FileFacts {
        with_family!(self, g => g.file())
    }

    fn inputs(&self) -> &[crate::nbg::parse::IoRecord] {
        with_family!(self, g => g.inputs())
    }

    fn outputs(&self) -> &[crate::nbg::parse::IoRecord] {
        with_family!(self, g => g.outputs())
    }

    fn network(&self) -> Option<Network<'_>> {
        with_family!(self, g => g.network())
    }

    fn corpus_invariants(&self) -> &[crate::nbg::parse::invariants::Invariant] {
        with_family!(self, g => g.corpus_invariants())
    }

    fn records(&self) -> &crate::nbg::parse::records::Records {
        with_family!(self, g => g.records())
    }

    fn memory(&self) -> DeclaredMemory {
        with_family!(self, g => g.memory())
    }

    fn layout_evidence(&self) -> Option<crate::nbg::format::v1::LayoutEvidence> {
        with_family!(self, g => g.layout_evidence())
    }

    fn crc_summary(&self) -> CrcSummary {
        with_family!(self, g => g.crc_summary())
    }

    fn layout(&self) -> Layout<'_> {
        with_family!(self, g => g.layout())
    }

    fn integrity(&self) -> Integrity<'_> {
        with_family!(self, g => g.integrity())
    }

    fn connection_region(&self) -> &crate::nbg::parse::ConnectionRegion {
        with_family!(self, g => g.connection_region())
    }

    fn claims<'a>(&self, read: &Read<'a>) -> Vec<Claim> {
        with_family!(self, g => g.claims(read))
    }

    fn views(&self) -> Vec<View> {
        with_family!(self, g => g.views())
    }

    fn pieces<'a>(&self, o: &Owner, read: &Read<'a>) -> Option<Vec<Piece>> {
        with_family!(self, g => g.pieces(o, read))
    }

    fn coefficient_pieces<'a>(&self, read: &Read<'a>) -> super::CoefficientPieces {
        with_family!(self, g => g.coefficient_pieces(read))
    }

    fn payload_name(&self, origin: Origin) -> Option<&str> {
        with_family!(self, g => g.payload_name(origin))
    }

    fn located(&self, o: &Owner, offset: u64) -> Located {
        with_family!(self, g => g.located(o, offset))
    }

    fn owner_content(&self, origin: &Origin) -> crate::nbg::format::Content {
        with_family!(self, g => g.owner_content(origin))
    }

    fn structural_signature(&self) -> Hash256 {
        with_family!(self, g => g.structural_signature())
    }

    fn to_json(&self) -> serde_json::Value {
        with_family!(self, g => g.to_json())
    }

    fn descriptors(&self) -> Vec<String> {
        with_family!(self, g => g.descriptors())
    }

    fn payloads(&self) -> Vec<Payload> {
        with_family!(self, g => g.payloads())
    }

    fn crc_rule(&self) -> CrcRule {
        with_family!(self, g => g.crc_rule())
    }

    fn crc_class(&self) -> Option<CrcClass> {
        with_family!(self, g => g.crc_class())
    }

    fn file_crc(&self, bytes: &[u8]) -> Option<u32> {
        with_family!(self, g => g.file_crc(bytes))
    }

    fn derived_checksums(&self) -> Vec<DerivedChecksum> {
        with_family!(self, g => g.derived_checksums())
    }

    fn checksum_table(&self) -> Option<(u64, u64)> {
        with_family!(self, g => g.checksum_table())
    }

    fn coverage_code(&self, offset: u64) -> Option<&'static str> {
        with_family!(self, g => g.coverage_code(offset))
    }

    fn unchecked_reason(&self, offset: u64, place: Place) -> Option<&'static str> {
        with_family!(self, g => g.unchecked_reason(offset, place))
    }

    fn unknown_field_bytes(&self) -> u64 {
        with_family!(self, g => g.unknown_field_bytes())
    }

    fn patch_targets(&self) -> Option<crate::nbg::parse::patch_targets::PatchTargets> {
        with_family!(self, g => g.patch_targets())
    }

    fn coefficient_view(&self) -> crate::nbg::parse::patch_targets::CoefficientView<'_> {
        with_family!(self, g => g.coefficient_view())
    }

    fn dynaio_region(&self) -> Option<u64> {
        with_family!(self, g => g.dynaio_region())
    }

    fn dynaio_ranges(&self) -> Vec<(u64, u64)> {
        with_family!(self, g => g.dynaio_ranges())
    }

    fn crc_explanation(&self, crc_of: &mut dyn FnMut(u64, u64) -> u32) -> Explanation {
        with_family!(self, g => g.crc_explanation(crc_of))
    }

    fn recheck_records(
        &self,
        data: crate::nbg::read::Data<'_>,
    ) -> Result<(), crate::nbg::failure::Failure> {
        with_family!(self, g => g.recheck_records(data))
    }

    fn crc_flips(
        &self,
        crc_of: &mut dyn FnMut(u64, u64) -> u32,
        patterns: &[u8],
    ) -> Option<crate::nbg::crc_rules::CrcFlips> {
        with_family!(self, g => g.crc_flips(crc_of, patterns))
    }
}
