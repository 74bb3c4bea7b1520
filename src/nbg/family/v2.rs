//! `NbgFamily` for a v2 graph.

use super::*;

impl NbgV2<'_> {
    /// The check that a change to a payload or gap byte fails first, range by range in file
    /// order: the section-40 checksum of the section holding it (checked before the header's),
    /// else the header CRC where its rule covers the byte (a section's payload, or every byte
    /// but the field under the whole-file rule). The header, sub-header, directory and section
    /// 40 are read by rules that come first, so their codes are the parse's own.
    fn checksum_coverage(&self) -> Vec<(u64, u64, &'static str)> {
        let mut sections: Vec<(u64, u64, &'static str)> = self
            .sections
            .iter()
            .filter(|s| s.size > 0)
            .map(|s| {
                let own = self
                    .section_checksums
                    .iter()
                    .any(|c| c.section_type == s.kind);
                let code = if own {
                    "section-checksum-mismatch"
                } else {
                    "file-checksum-mismatch"
                };
                (s.offset, s.end(), code)
            })
            .collect();
        // Sections do not overlap (the parser refuses overlaps).
        sections.sort_unstable();
        if self.header_crc() == HeaderCrc::SectionPayloads {
            return sections;
        }
        // Whole file: the gaps between sections too, all but the field itself.
        let field = f2::OFF_CRC_SUM as u64;
        let mut out = Vec::with_capacity(2 * sections.len() + 2);
        let mut at = 0;
        let gap = |out: &mut Vec<_>, from: u64, to: u64| {
            for (s, e) in [(from, to.min(field)), (from.max(field + 4), to)] {
                if s < e {
                    out.push((s, e, "file-checksum-mismatch"));
                }
            }
        };
        for s in sections {
            gap(&mut out, at, s.0);
            at = s.1;
            out.push(s);
        }
        gap(&mut out, at, self.file.size);
        out
    }

    /// The header CRC rule of this file's version (the spec's rule for a version nbg does not
    /// list, which the parser refuses before a graph exists).
    fn header_crc(&self) -> HeaderCrc {
        crate::nbg::format::v2_rules(self.header.version())
            .map_or(HeaderCrc::SectionPayloads, |r| r.header_crc)
    }
}

impl<'data> NbgFamily<'data> for NbgV2<'data> {
    fn family(&self) -> Family {
        Family::V2
    }

    fn bytes(&self) -> &'data [u8] {
        self.bytes
    }

    fn format(&self) -> &'static str {
        self.format
    }

    fn version(&self) -> u32 {
        self.header.version()
    }

    fn target(&self) -> u32 {
        self.header.target()
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
        let mut d = vec![format!(
            "sub-header {} {} {}",
            self.sub_header.section_headers_offset(),
            self.sub_header.section_header_size(),
            self.sub_header.section_header_count()
        )];
        d.extend(self.sections.iter().map(|s| {
            format!(
                "section {} type {} offset {} size {} align {} entry {} load {} reserved {:?}",
                s.index,
                s.kind,
                s.offset,
                s.size,
                s.alignment,
                s.entry_size,
                s.load_address,
                s.reserved_words
            )
        }));
        d
    }

    fn payloads(&self) -> Vec<Payload> {
        self.sections
            .iter()
            .map(|s| Payload {
                name: s.type_name,
                offset: s.offset,
                size: s.size,
            })
            .collect()
    }

    fn crc_rule(&self) -> CrcRule {
        CrcRule {
            field: f2::OFF_CRC_SUM as u64,
            rule: match self.header_crc() {
                HeaderCrc::SectionPayloads => "v2-directory-order",
                HeaderCrc::WholeFileFieldZeroed => crc_rules::WHOLE_FILE_FIELD_ZEROED,
            },
            field_name: "header crc_sum",
        }
    }

    fn crc_class(&self) -> Option<CrcClass> {
        None
    }

    fn file_crc(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() as u64 != self.file.size {
            return None;
        }
        if self.header_crc() == HeaderCrc::WholeFileFieldZeroed {
            return Some(crc_rules::whole_file_field_zeroed(
                bytes,
                f2::OFF_CRC_SUM as u64,
            ));
        }
        // The parser bounded every section inside the file, which has `bytes`' length.
        let listing = self
            .sections
            .iter()
            .map(|s| {
                let payload = bytes.get(s.offset as usize..s.end() as usize)?;
                Some((s.kind, s.offset, s.size, crc32(payload)))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(crc_rules::v2_file_crc(bytes, &listing))
    }

    fn derived_checksums(&self) -> Vec<DerivedChecksum> {
        // The parser rejects a checksum record whose target section is absent, so none is
        // skipped here in a parsed graph.
        self.section_checksums
            .iter()
            .filter_map(|c| {
                let t = self.section(c.section_type)?;
                Some(DerivedChecksum {
                    value_at: c.offset + 4,
                    target: (t.offset, t.end()),
                    section_type: c.section_type,
                })
            })
            .collect()
    }

    fn checksum_table(&self) -> Option<(u64, u64)> {
        self.section(section::CHECKSUM).map(|s| (s.offset, s.end()))
    }

    fn coverage_code(&self, offset: u64) -> Option<&'static str> {
        crc_rules::covering(&self.checksum_coverage(), offset)
    }

    fn unchecked_reason(&self, offset: u64, place: Place) -> Option<&'static str> {
        match place {
            Place::Gap => Some("gap byte: excluded from every checksum by the recovered rule"),
            Place::ConnectionTail => {
                Some("connection region with no section owner: no checksum covers it")
            }
            Place::Structure => self.structure_reason(offset),
            Place::Other => None,
        }
    }

    fn unknown_field_bytes(&self) -> u64 {
        use crate::nbg::parse::command_tables::unknown_bytes;
        use crate::nbg::parse::patch_targets::unknown_region_bytes;
        let of = |kind: u32, records: usize| {
            self.section(kind)
                .and_then(|s| crate::nbg::holds::v2(kind)?.record(u64::from(s.entry_size)))
                .map_or(0, |r| records as u64 * unknown_bytes(&r))
        };
        of(section::NN, self.nn_commands.as_ref().map_or(0, Vec::len))
            + of(section::TP, self.tp_commands.as_ref().map_or(0, Vec::len))
            + unknown_region_bytes(self.icd_regions.as_deref())
            + unknown_region_bytes(self.coef_regions.as_deref())
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
            regions: self.coef_regions.as_deref().unwrap_or(&[]),
            records: &self.records,
            context: self.patch_context(),
        }
    }

    fn dynaio_region(&self) -> Option<u64> {
        self.section(section::DYNAIO).map(|s| s.offset)
    }

    fn inputs(&self) -> &[crate::nbg::parse::IoRecord] {
        &self.inputs
    }

    fn outputs(&self) -> &[crate::nbg::parse::IoRecord] {
        &self.outputs
    }

    fn network(&self) -> Option<Network<'_>> {
        self.network_info.as_ref().map(|n| Network {
            name: n.name(),
            layers: n.layer_count(),
            operations: n.operation_count(),
            cores: Some(n.core_count()),
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
            pool_bytes: self.memory_pool_bytes,
            axi_sram_bytes: self.axi_sram_bytes,
            vip_sram_bytes: self.vip_sram_bytes,
        }
    }

    fn layout_evidence(&self) -> Option<crate::nbg::format::v1::LayoutEvidence> {
        None
    }

    fn crc_summary(&self) -> CrcSummary {
        CrcSummary {
            status: crate::nbg::crc_rules::CrcClass::Matches,
            rule: Some(self.file_checksum.scope.to_string()),
            stored: self.file_checksum.recorded_crc32,
            offset: u64::try_from(crate::nbg::format::v2::OFF_CRC_SUM).unwrap_or(0),
        }
    }

    fn layout(&self) -> Layout<'_> {
        Layout::Sections(&self.sections)
    }

    fn integrity(&self) -> Integrity<'_> {
        Integrity::Directory {
            file: &self.file_checksum,
            sections: &self.section_checksums,
            dynamic_io: self.dynamic_io.as_ref(),
        }
    }

    fn connection_region(&self) -> &crate::nbg::parse::ConnectionRegion {
        &self.connection_region
    }

    fn claims<'a>(&self, read: &Read<'a>) -> Vec<Claim> {
        claims::v2(self, read)
    }

    fn views(&self) -> Vec<View> {
        claims::views_v2(self)
    }

    fn pieces<'a>(&self, o: &Owner, read: &Read<'a>) -> Option<Vec<Piece>> {
        pieces::v2(self, o, read)
    }

    fn coefficient_pieces<'a>(&self, read: &Read<'a>) -> super::CoefficientPieces {
        let Some(s) = self.section(section::COEF_DATA) else {
            return Default::default();
        };
        pieces::coefficient_parts(&self.coefficient_view(), read, s.type_name, None)
            .into_iter()
            .map(|((e, part), p)| ((s.index, e, part), p))
            .collect()
    }

    fn payload_name(&self, origin: Origin) -> Option<&str> {
        match origin {
            Origin::Section(i) => self.sections.get(i).map(|s| s.type_name),
            _ => None,
        }
    }

    fn located(&self, o: &Owner, offset: u64) -> Located {
        naming::v2(self, &naming::At::new(o, offset))
    }

    fn owner_content(&self, origin: &Origin) -> crate::nbg::format::Content {
        match origin {
            Origin::Section(i) | Origin::SectionEntry(i, _) | Origin::Coefficient(i, _, _) => self
                .sections
                .get(*i)
                .map_or(crate::nbg::format::Content::Other, |s| {
                    crate::nbg::format::section::content(s.kind)
                }),
            _ => crate::nbg::format::Content::Other,
        }
    }

    fn dynaio_ranges(&self) -> Vec<(u64, u64)> {
        self.dynamic_io.as_ref().map_or_else(Vec::new, |d| {
            d.entries
                .iter()
                .map(|e| {
                    (
                        d.region_offset + e.offset,
                        d.region_offset + e.offset + e.size,
                    )
                })
                .collect()
        })
    }

    fn recheck_records(
        &self,
        data: crate::nbg::read::Data<'_>,
    ) -> Result<(), crate::nbg::failure::Failure> {
        NbgV2::recheck_records(self, data)
    }

    fn crc_flips(
        &self,
        _crc_of: &mut dyn FnMut(u64, u64) -> u32,
        _patterns: &[u8],
    ) -> Option<crc_rules::CrcFlips> {
        Some(crc_rules::CrcFlips::Enforced(self.checksum_coverage()))
    }

    fn crc_explanation(&self, crc_of: &mut dyn FnMut(u64, u64) -> u32) -> Explanation {
        super::crc::explain_v2(self, crc_of)
    }
}

impl NbgV2<'_> {
    /// Header and directory words the parser records without enforcing them.
    fn structure_reason(&self, o: u64) -> Option<&'static str> {
        let dir = u64::from(self.sub_header.section_headers_offset());
        let entry = u64::from(f2::SECTION_HEADER_SIZE);
        let dir_end = dir + self.sections.len() as u64 * entry;
        if o < f2::HEADER_SIZE as u64 {
            return match fm::v2_header::RECORD.field_at(o).map(|f| f.name) {
                Some("target") => Some("header target: recorded, not validated (a later gate)"),
                Some("class_word" | "reserved2" | "reserved3") => {
                    Some("reserved header word: reported as a corpus invariant, not enforced")
                }
                _ => None,
            };
        }
        if !(dir <= o && o < dir_end) {
            return None;
        }
        let rel = (o - dir) % entry;
        let index = ((o - dir) / entry) as usize;
        let io = self
            .sections
            .get(index)
            .is_some_and(|s| matches!(s.kind, section::INPUT | section::OUTPUT));
        match fm::v2_section_header::RECORD.field_at(rel).map(|f| f.name) {
            Some("type") => Some(
                "section type word: the CRC rule excludes the directory; the renamed section is still bounded and valid",
            ),
            Some("load_address" | "alignment" | "reserved_words") => {
                Some("directory descriptor word: reported, not enforced")
            }
            Some("entry_size") if !io => {
                Some("entry size of a section without decoded records: reported")
            }
            _ => None,
        }
    }
}
