//! `docs/failure-codes.md` against the code table: every failure code has one row, with the
//! basis `Code::basis` gives it, and no refusal rests on a corpus value.

use crate::common;
use nbg_lab::Code;
use std::collections::BTreeMap;

/// `code -> basis` from the page's table rows (`| `code` | basis | rule |`).
fn documented() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(common::root().join("docs/failure-codes.md")).unwrap();
    let mut rows = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if let [_, code, basis, _, ..] = cells[..] {
            if let Some(code) = code.strip_prefix('`').and_then(|c| c.strip_suffix('`')) {
                let previous = rows.insert(code.to_string(), basis.to_string());
                assert!(previous.is_none(), "{code} has two rows");
            }
        }
    }
    rows
}

#[test]
fn every_refusal_is_documented_with_its_basis() {
    let rows = documented();
    for code in Code::ALL {
        if code.basis() == nbg_lab::nbg::failure::Basis::Lab {
            continue;
        }
        let Some(basis) = rows.get(code.as_str()) else {
            panic!("docs/failure-codes.md has no row for {code}");
        };
        assert_eq!(basis, code.basis().as_str(), "{code}");
    }
    for (code, basis) in &rows {
        assert_ne!(basis, "corpus", "{code}: a corpus value never refuses");
        if !Code::ALL.iter().any(|c| c.as_str() == code) {
            // Corpus invariants have their own table, whose second column is a family.
            assert!(
                ["v2", "both"].contains(&basis.as_str()),
                "{code} is no failure code"
            );
        }
    }
}
