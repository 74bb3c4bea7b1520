//! The text form of `nbg onnx audit`, `run` and `crosscheck`.

use crate::onnx::audit::Audit;
use crate::onnx::crosscheck::Crosscheck;
use crate::onnx::run::RunReport;
use std::fmt::Write;

/// `nbg onnx audit`: source, signature, inventory, typed I/O, placement and partitions.
pub fn audit(model: &str, a: &Audit) -> String {
    let i = &a.inventory;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{model} ({} bytes, sha256 {})",
        a.source.bytes, a.source.sha256
    );
    let _ = writeln!(out, "  signature  {}", a.signature);
    let _ = writeln!(
        out,
        "  inventory  {} graphs, depth {}, {} top-level + {} nested = {} nodes, {} initializers, {} attribute tensors, {} constant bytes",
        i.graphs,
        i.max_depth,
        i.top_level_nodes,
        i.nested_nodes,
        i.total_nodes,
        i.initializers,
        i.attribute_tensors,
        i.encoded_constant_bytes
    );
    for (side, values) in [("input ", &a.inputs), ("output", &a.outputs)] {
        for v in values {
            let _ = writeln!(
                out,
                "  {side}     {} {} {}",
                v.name,
                v.elem_type_name.unwrap_or(v.kind.as_str()),
                serde_json::to_string(&v.shape).unwrap_or_default()
            );
        }
    }
    for p in &a.placement {
        let _ = writeln!(
            out,
            "  node       {:<24} {:<12} {}  {}",
            p.node,
            p.op_type,
            p.placement,
            p.reasons
                .iter()
                .map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    for p in &a.partitions {
        let _ = writeln!(
            out,
            "  partition  {} {}: {} nodes, in {:?}, out {:?}",
            p.index,
            p.placement,
            p.nodes.len(),
            p.inputs,
            p.outputs
        );
    }
    out
}

/// `nbg onnx run`: mode, classification, engine, every output and the archive written.
pub fn run(model: &str, output: &str, report: &RunReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{model} {}: {} (NPU attempts {}, CPU sessions {}) with {} {}",
        report.mode,
        report.classification,
        report.npu_attempts,
        report.cpu_sessions,
        report.engine,
        report.engine_version
    );
    for t in &report.outputs {
        let _ = writeln!(
            o,
            "  output {} {} {:?} sha256 {}",
            t.name, t.dtype, t.shape, t.sha256
        );
    }
    let _ = writeln!(o, "  wrote {output} (sha256 {})", report.output_npz_sha256);
    o
}

/// `nbg onnx crosscheck`: the verdict and tolerance, refusals, and per output the differences.
pub fn crosscheck(model: &str, c: &Crosscheck) -> String {
    let mut o = String::new();
    // The verdict's serde name, as in the JSON report.
    let verdict = serde_json::to_value(c.verdict)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "{model}: {verdict} (tolerance: |ort - tract| <= {} + {} * |ort|)",
        c.tolerance.atol, c.tolerance.rtol
    );
    for (engine, r) in [("ort", &c.ort), ("tract", &c.tract)] {
        if let Some(e) = &r.error {
            let _ = writeln!(o, "  {engine:<6} refused {}: {}", e.code, e.message);
        }
    }
    for d in &c.outputs {
        let _ = writeln!(
            o,
            "  output {:<20} max abs {:e} max rel {:e} {}",
            d.name,
            d.max_abs,
            d.max_rel,
            if d.agree { "agree" } else { "DISAGREE" }
        );
    }
    o
}

/// `nbg onnx qualify`: the target, the NBG, each output's error beside its bound, the verdict.
pub fn qualification(model: &str, r: &crate::simulator::qualify::Record) -> String {
    use crate::simulator::qualify::{Tolerance, Verdict};
    let mut s = format!(
        "{model} on {} ({}): signature {}\n  nbg sha256 {}, driver pin {}, oracle {} {}\n",
        r.target.name,
        r.target.pid,
        r.signature,
        r.nbg_sha256,
        r.driver.pin_sha256,
        r.oracle.engine,
        r.oracle.version
    );
    if let Some(x) = &r.refusal {
        s.push_str(&format!("  the simulator did not run it: {x}\n"));
    }
    for o in &r.outputs {
        let rule = match o.tolerance {
            Tolerance::RangeFraction { fraction, .. } => format!("{}% of range", fraction * 100.0),
            Tolerance::Steps { steps, step } => format!("{steps} steps of {step}"),
        };
        s.push_str(&format!(
            "  set {} {:<20} {:?} max abs {:.6} (bound {:.6}, {rule}), max rel {:.6}, reference {:.4}..{:.4}: {}\n",
            o.set,
            o.name,
            o.shape,
            o.max_abs_error,
            o.bound,
            o.max_rel_error,
            o.reference_range[0],
            o.reference_range[1],
            if o.pass { "pass" } else { "FAIL" }
        ));
    }
    s.push_str(match r.verdict {
        Verdict::Qualified => "qualified\n",
        Verdict::NotQualified => "not qualified\n",
    });
    s
}
