//! The Markdown summary of an inventory (`nbg inventory --summary`, the committed
//! `evidence/inventory/*.md`).

use crate::lab::inventory::Head;
use std::fmt::Write;

/// The Markdown summary of an inventory's head.
pub fn summary(head: &Head) -> String {
    let mut s = String::new();
    let id = &head.identity;
    let _ = writeln!(s, "# Corpus inventory: {}\n", head.config.name);
    let _ = writeln!(s, "| identity | value |\n| --- | --- |");
    for (k, v) in [
        ("files", id.files.to_string()),
        ("bytes", id.bytes.to_string()),
        ("unique_file_sha256", id.unique_file_sha256.to_string()),
        (
            "unique_structural_signatures",
            id.unique_structural_signatures.to_string(),
        ),
        ("config_sha256", id.config_sha256.hex()),
        (
            "inventory_sha256",
            id.inventory_sha256.map_or_else(|| "-".into(), |h| h.hex()),
        ),
    ] {
        let _ = writeln!(s, "| {k} | {v} |");
    }
    table(
        &mut s,
        "Version and target",
        &["format", "version", "target", "files"],
        head.version_target.iter().map(|r| {
            vec![
                r.format.clone(),
                r.version.clone(),
                r.target.clone(),
                r.files.to_string(),
            ]
        }),
    );
    table(
        &mut s,
        "Section and table profile",
        &["type", "name", "files", "entry_sizes"],
        head.section_profile.iter().map(|r| {
            let sizes: Vec<String> = r.entry_sizes.iter().map(u64::to_string).collect();
            vec![
                r.kind.clone(),
                r.name.clone(),
                r.files.to_string(),
                if sizes.is_empty() {
                    "-".into()
                } else {
                    sizes.join(", ")
                },
            ]
        }),
    );
    let surface = &head.tensor_surface;
    for (title, counts) in [
        ("Tensor formats", &surface.formats),
        ("Tensor data types", &surface.data_types),
        ("Quantization", &surface.quantization),
    ] {
        table(
            &mut s,
            title,
            &["value", "records"],
            counts.iter().map(|(k, n)| vec![k.clone(), n.to_string()]),
        );
    }
    table(
        &mut s,
        "I/O counts",
        &["inputs", "outputs", "files"],
        head.io_histogram.iter().map(|r| {
            vec![
                r.inputs.to_string(),
                r.outputs.to_string(),
                r.files.to_string(),
            ]
        }),
    );
    table(
        &mut s,
        "CRC findings",
        &["finding", "files"],
        head.crc.iter().map(|(k, n)| vec![k.clone(), n.to_string()]),
    );
    table(
        &mut s,
        "Failures",
        &["path", "code"],
        head.failures
            .iter()
            .map(|r| vec![r.path.clone(), r.code.clone()]),
    );
    s
}

/// A Markdown table under a heading.
fn table(s: &mut String, title: &str, cols: &[&str], rows: impl Iterator<Item = Vec<String>>) {
    let _ = writeln!(
        s,
        "\n## {title}\n\n| {} |\n|{}",
        cols.join(" | "),
        " --- |".repeat(cols.len())
    );
    for cells in rows {
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
}
