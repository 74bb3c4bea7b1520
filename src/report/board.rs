//! Text of the board user's commands: `nbg info`, `nbg check --target/--runtime` and
//! `nbg carve`.

use crate::lab::carve::Carved;
use crate::lab::compatibility::Verdict;
use crate::lab::info::{Info, Tensor};
use std::fmt::Write as _;

fn tensor_line(s: &mut String, t: &Tensor) {
    let quant = match (t.scale, t.zero_point, t.fixed_point_position) {
        (Some(scale), Some(zp), _) => {
            format!("{} scale {scale} zero point {zp}", t.quantization_format)
        }
        (_, _, Some(fp)) => format!("{} fixed point {fp}", t.quantization_format),
        _ => t.quantization_format.clone(),
    };
    let list = |d: &[u32]| d.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let _ = writeln!(
        s,
        "  {:>3} {:<32} [{}] (innermost first; NPZ [{}]) {} {}, {}",
        t.index,
        t.name.as_deref().unwrap_or("(no name)"),
        list(&t.shape),
        list(&t.npz_shape),
        t.element_type,
        quant,
        t.storage_bytes
            .map_or_else(|| "storage unknown".into(), |b| format!("{b} bytes"))
    );
}

/// One screen per file.
pub fn info(i: &Info) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", i.file);
    let evidence = i
        .layout_evidence
        .map(|e| format!(", layout {e}"))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "  format     {} version {}{evidence}",
        i.format, i.version
    );
    let configs = match &i.configurations {
        None => "driver configurations unknown (driver not installed)".to_string(),
        Some(c) if c.is_empty() => "no driver configuration has this PID".to_string(),
        Some(c) => c.join(", "),
    };
    let _ = writeln!(s, "  target     {} ({configs})", i.target);
    let _ = writeln!(s, "  network    {:?}", i.network);
    let _ = writeln!(s, "  file       {} bytes, sha256 {}", i.file_size, i.sha256);
    let _ = writeln!(
        s,
        "  crc        {}{}",
        i.crc.status,
        i.crc
            .rule
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default()
    );
    let _ = writeln!(s, "  inputs ({}):", i.inputs.len());
    for t in &i.inputs {
        tensor_line(&mut s, t);
    }
    let _ = writeln!(s, "  outputs ({}):", i.outputs.len());
    for t in &i.outputs {
        tensor_line(&mut s, t);
    }
    match &i.engines {
        None => {
            let _ = writeln!(s, "  operations: not decoded for this version");
        }
        Some(e) => {
            let total: u64 = e.iter().map(|e| e.operations).sum();
            // Name only the records the file has.
            let left: Vec<String> = i
                .engines_left_out
                .iter()
                .map(|(name, n)| format!("{n} {name}"))
                .collect();
            let left = if left.is_empty() {
                String::new()
            } else {
                format!(", {} left out", left.join(" and "))
            };
            let _ = writeln!(s, "  operations per engine ({total}{left}):");
            for e in e {
                let _ = writeln!(
                    s,
                    "    {:<8} {:>6}  {:>6.2} %  {}",
                    e.engine,
                    e.operations,
                    e.share_percent,
                    engine_meaning(&e.engine)
                );
            }
        }
    }
    let _ = writeln!(s, "  size by content:");
    for c in &i.bytes_by_content {
        let _ = writeln!(
            s,
            "    {:<18} {:>12} bytes  {:>6.2} %",
            c.content, c.bytes, c.share_percent
        );
    }
    let d = &i.decoding;
    let pct = |n: u64| 100.0 * n as f64 / i.file_size.max(1) as f64;
    let _ = writeln!(
        s,
        "  decoded    {:.2} % in decoded records ({:.2} % in fields named unknown), {:.2} % opaque, {:.2} % padding (alignment, padding and tail owners)",
        pct(d.decoded_bytes),
        pct(d.unknown_field_bytes),
        pct(d.opaque_bytes),
        pct(d.padding_bytes)
    );
    for g in &d.undecoded {
        let _ = writeln!(
            s,
            "    opaque   {:>10} bytes {:>6.2} % {}{} ({} owner{}; first: {})",
            g.bytes,
            pct(g.bytes),
            g.reason.as_str(),
            g.code.as_ref().map_or(String::new(), |c| format!(" {c}")),
            g.owners,
            if g.owners == 1 { "" } else { "s" },
            g.first
        );
    }
    if let Some(p) = &i.patches {
        let _ = writeln!(
            s,
            "  patches    {} records, {} resolved to a named field and source, {} unused (all-zero), {} unresolved (nbg patches)",
            p.records,
            p.resolved,
            p.unused,
            p.records - p.resolved - p.unused
        );
    }
    let m = &i.memory;
    let show =
        |v: Option<u64>| v.map_or_else(|| "not declared".to_string(), |b| format!("{b} bytes"));
    let _ = writeln!(
        s,
        "  memory     pool {}, AXI SRAM {}, VIP SRAM {} (beside the file's {} bytes)",
        show(m.pool_bytes),
        show(m.axi_sram_bytes.map(u64::from)),
        show(m.vip_sram_bytes.map(u64::from)),
        i.file_size
    );
    s
}

/// One line per file, and the hint of each check that does not pass.
pub fn verdict(v: &Verdict) -> String {
    let mut s = String::new();
    let facts: Vec<String> = v
        .checks
        .iter()
        .map(|c| {
            let sim = c
                .vendor_simulator
                .map(|x| format!(" (vendor simulator {x})"))
                .unwrap_or_default();
            format!(
                "{} {} against {}: {}{sim}",
                c.check, c.file, c.expected, c.outcome
            )
        })
        .collect();
    let _ = writeln!(s, "{}: {}: {}", v.file, v.verdict, facts.join("; "));
    for c in &v.checks {
        if let Some(h) = &c.hint {
            let _ = writeln!(s, "  hint ({}): {h}", c.check);
        }
    }
    s
}

/// Every valid NBG and near miss, in image order.
pub fn carve(c: &Carved) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} bytes, {} VPMN magic(s): {} valid NBG(s), {} near miss(es)",
        c.image,
        c.image_bytes,
        c.magics,
        c.found.len(),
        c.near_miss_count
    );
    for f in &c.found {
        let _ = writeln!(
            s,
            "  0x{:010x}  valid      {:>12} bytes  {} {} target {}  sha256 {}{}",
            f.offset,
            f.bytes,
            f.format,
            f.version,
            f.target,
            f.sha256,
            f.extracted
                .as_deref()
                .map(|p| format!("  -> {p}"))
                .unwrap_or_default()
        );
    }
    for m in &c.near_misses {
        let _ = writeln!(
            s,
            "  0x{:010x}  near-miss  {} at 0x{:x}: {}{}",
            m.offset,
            m.code.as_str(),
            m.failure_offset,
            m.message,
            m.inside
                .map(|o| format!(" (inside the NBG at 0x{o:x})"))
                .unwrap_or_default()
        );
    }
    let unlisted = c.near_miss_count - c.near_misses.len() as u64;
    if unlisted > 0 {
        let _ = writeln!(s, "  ... {unlisted} more near misses (not listed)");
    }
    s
}

/// What an operation type of the public enum (`NONE SH NN TP SW SC SP NN_LUT NT`) runs on,
/// for the reader of `info`: the NN-engine types are those the vendor's reader indexes into
/// the NN records (`docs/formats.md`).
fn engine_meaning(engine: &str) -> &'static str {
    match engine {
        "NN" => "NN engine (convolutions, fully connected)",
        "TP" => "tensor processor",
        "SH" => "shader program (PPU)",
        "SW" => "software, on the CPU",
        "SP" => "NN engine (stream processor)",
        "NN_LUT" => "NN engine (lookup table)",
        "NT" => "NN engine (the enum names no more; transposes and reshapes in the public files)",
        _ => "",
    }
}
