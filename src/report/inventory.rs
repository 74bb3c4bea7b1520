//! The Markdown summary of an inventory document (`nbg inventory --summary`, the committed
//! `evidence/inventory/*.md`).

use serde_json::{Value, json};

/// The Markdown summary of an inventory document.
pub fn summary(doc: &Value) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let id = &doc["identity"];
    let _ = writeln!(
        s,
        "# Corpus inventory: {}\n",
        doc["config"]["name"].as_str().unwrap_or("")
    );
    let _ = writeln!(s, "| identity | value |\n| --- | --- |");
    for k in [
        "files",
        "bytes",
        "unique_file_sha256",
        "unique_structural_signatures",
        "config_sha256",
        "inventory_sha256",
    ] {
        let _ = writeln!(s, "| {k} | {} |", plain(&id[k]));
    }
    let table = |s: &mut String, title: &str, rows: &Value, cols: &[&str]| {
        let _ = writeln!(
            s,
            "\n## {title}\n\n| {} |\n|{}",
            cols.join(" | "),
            " --- |".repeat(cols.len())
        );
        for r in rows.as_array().into_iter().flatten() {
            let cells: Vec<String> = cols.iter().map(|c| plain(&r[*c])).collect();
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        }
    };
    table(
        &mut s,
        "Version and target",
        &doc["version_target"],
        &["format", "version", "target", "files"],
    );
    table(
        &mut s,
        "Section and table profile",
        &doc["section_profile"],
        &["type", "name", "files", "entry_sizes"],
    );
    for (title, key) in [
        ("Tensor formats", "formats"),
        ("Tensor data types", "data_types"),
        ("Quantization", "quantization"),
    ] {
        let rows: Vec<Value> = doc["tensor_surface"][key]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| json!({ "value": k, "records": v }))
            .collect();
        table(&mut s, title, &Value::Array(rows), &["value", "records"]);
    }
    table(
        &mut s,
        "I/O counts",
        &doc["io_histogram"],
        &["inputs", "outputs", "files"],
    );
    let crc: Vec<Value> = doc["crc"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| json!({ "finding": k, "files": v }))
        .collect();
    table(
        &mut s,
        "CRC findings",
        &Value::Array(crc),
        &["finding", "files"],
    );
    table(&mut s, "Failures", &doc["failures"], &["path", "code"]);
    s
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        Value::Array(a) if a.is_empty() => "-".into(),
        Value::Array(a) => a.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}
