//! Relations a corpus showed, checked on each file and reported under `corpus_invariants`, never
//! enforced: a value one producer always wrote is not a format rule (`docs/failure-codes.md`,
//! basis `corpus`). The family parsers add their own (v2: the spec's stock corpus); the record
//! relations here hold for both families.

use crate::nbg::format::records::{NO_LAYER, operation_type};
use crate::nbg::parse::records::Records;
use serde::Serialize;

/// A relation observed across a corpus, checked on this file: reported, never enforced.
#[derive(Clone, Debug, Serialize)]
pub struct Invariant {
    /// The relation's stable name.
    pub name: &'static str,
    /// What the corpus shows.
    pub expected: String,
    /// What this file has.
    pub observed: String,
    /// Whether this file agrees.
    pub holds: bool,
}

/// Collects invariants in the order they are checked.
#[derive(Default)]
pub struct Invariants(pub Vec<Invariant>);

impl Invariants {
    /// Record `name`: the corpus value `expected`, this file's `observed`, and whether it holds.
    pub fn check(&mut self, name: &'static str, expected: &str, observed: String, holds: bool) {
        self.0.push(Invariant {
            name,
            expected: expected.into(),
            observed,
            holds,
        });
    }

    /// The record relations, where the records are decoded:
    /// - `no-layer-id`: the spec's corpus and the public v1 files name "no layer" on INIT and
    ///   END as 0xffff; the A733 toolkit and the simulator driver write 0xffffffff, which nbg
    ///   accepts as well (`format::records::NO_LAYER_IDS`);
    /// - `layers-declare-at-most-attached-operations`: the layers together declare at most the
    ///   operations that name a layer (the spec's corpus and the public v1 files; the simulator
    ///   driver's 0x00020005 files break it).
    pub fn records(&mut self, r: &Records) {
        let (Some(layers), Some(operations)) = (&r.layers, &r.operations) else {
            return;
        };
        let mut ids: Vec<u32> = operations
            .iter()
            .filter(|o| matches!(o.kind(), operation_type::INIT | operation_type::END))
            .map(|o| o.layer_id())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        if !ids.is_empty() {
            let shown: Vec<String> = ids.iter().map(|id| format!("0x{id:x}")).collect();
            self.check(
                "no-layer-id",
                &format!("0x{NO_LAYER:x}"),
                shown.join(", "),
                ids == [NO_LAYER],
            );
        }
        let declared: u64 = layers.iter().map(|l| u64::from(l.operation_count())).sum();
        let attached: u64 = layers.iter().map(|l| l.named_operations).sum();
        self.check(
            "layers-declare-at-most-attached-operations",
            "declared <= attached",
            format!("declared {declared}, attached {attached}"),
            declared <= attached,
        );
    }
}
