//! Text of `nbg locate`, from its document.

use crate::lab::locate::{ENCODINGS, ORDERS};
use serde_json::Value;

/// The registry line, each initializer with its matches, the coverage of each admitted region
/// and the counts.
pub fn text(doc: &Value) -> String {
    let mut s = format!(
        "registry sha256 {} ({} orders x {} encodings)\n",
        doc["registry_sha256"].as_str().unwrap_or(""),
        ORDERS.len(),
        ENCODINGS.len()
    );
    for r in doc["initializers"].as_array().into_iter().flatten() {
        let dims: Vec<String> = r["dims"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| d.to_string())
            .collect();
        s.push_str(&format!(
            "{:<32} {:<8} [{}] {}",
            r["name"].as_str().unwrap_or(""),
            r["data_type"].as_str().unwrap_or(""),
            dims.join(", "),
            r["result"].as_str().unwrap_or("")
        ));
        if let Some(reason) = r["reason"].as_str() {
            s.push_str(&format!(" ({reason})"));
        }
        s.push('\n');
        for m in r["matches"].as_array().into_iter().flatten() {
            for o in m["occurrences"].as_array().into_iter().flatten() {
                s.push_str(&format!(
                    "    {} at 0x{:x} ({}+0x{:x}){}\n",
                    m["transform"].as_str().unwrap_or(""),
                    o["file_offset"].as_u64().unwrap_or(0),
                    o["owner"].as_str().unwrap_or(""),
                    o["offset_in_owner"].as_u64().unwrap_or(0),
                    if m["degenerate"] == true {
                        " degenerate"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
    for c in doc["graph"]["coverage"].as_array().into_iter().flatten() {
        let (bytes, covered) = (
            c["bytes"].as_u64().unwrap_or(0),
            c["covered_bytes"].as_u64().unwrap_or(0),
        );
        s.push_str(&format!(
            "region {:<28} {bytes:>8} bytes, {covered:>8} covered by initializers{}\n",
            c["owner"].as_str().unwrap_or(""),
            if covered == 0 {
                " (content not found under any transform)"
            } else {
                ""
            }
        ));
    }
    let sum = &doc["summary"];
    if sum.is_object() {
        s.push_str(&format!(
            "{} found, {} not found, {} skipped\n",
            sum["found"], sum["not_found"], sum["skipped"]
        ));
    }
    s.push_str(&decoded(&doc["decoded"]));
    s
}

/// The source tensors against the decoded kernels and biases: where each is, under which
/// layout and quantization, and how many of its elements are exact and consistent.
fn decoded(d: &Value) -> String {
    let mut s = format!(
        "decoded coefficients: {} buffers, {} put together, {} refused; {} plain entries\n",
        d["buffers"], d["buffers_decoded"], d["buffers_refused"], d["plain_entries"]
    );
    for r in d["tensors"].as_array().into_iter().flatten() {
        let dims: Vec<String> = r["shape"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| d.to_string())
            .collect();
        let f = &r["found"];
        let what = if f.is_object() {
            let q = &f["quantization"];
            let quant = match q["position"].as_i64() {
                Some(p) => format!("{} {p}", q["type"].as_str().unwrap_or("")),
                None => q["type"].as_str().unwrap_or("").to_string(),
            };
            let reader = match (f["command"].as_u64(), f["operation"].as_u64()) {
                (Some(c), _) => format!("NN[{c}]"),
                (None, Some(o)) => format!("plain, op {o}"),
                (None, None) => "plain".to_string(),
            };
            let decimals = match f["decimals"].as_u64() {
                Some(n) => format!(" of the source rounded to {n} decimals"),
                None => String::new(),
            };
            format!(
                "entry {} @0x{:x} {reader} {} {quant}{decimals}: {} exact, {} consistent of {}",
                f["entry"],
                f["offset"].as_u64().unwrap_or(0),
                f["layout"].as_str().unwrap_or(""),
                f["exact"],
                f["consistent"],
                r["elements"]
            )
        } else {
            "not found".to_string()
        };
        s.push_str(&format!(
            "  {:<36} [{}] {what}\n",
            r["name"].as_str().unwrap_or(""),
            dims.join(", ")
        ));
    }
    let sum = &d["summary"];
    let (n, exact, consistent) = (
        sum["elements"].as_u64().unwrap_or(0),
        sum["exact"].as_u64().unwrap_or(0),
        sum["consistent"].as_u64().unwrap_or(0),
    );
    let pct = |x: u64| {
        if n == 0 {
            0.0
        } else {
            100.0 * x as f64 / n as f64
        }
    };
    s.push_str(&format!(
        "{} of {} source tensors found; {n} elements: {exact} exact ({:.2} %), {consistent} consistent ({:.2} %)\n",
        sum["found"],
        sum["tensors"],
        pct(exact),
        pct(consistent)
    ));
    s
}
