//! Text of `nbg locate`, from its report.

use crate::lab::kernel_match::{Quantization, Row, Storage};
use crate::lab::layers::Layers;
use crate::lab::locate::{Decoded, ENCODINGS, Located, ORDERS};
use std::fmt::Write;

/// The registry line, each initializer with its matches, the coverage of each admitted region
/// and the counts (ONNX models), then the decoded coefficients.
pub fn text(doc: &Located) -> String {
    let mut s = String::new();
    if let Some(r) = &doc.registry {
        let _ = writeln!(
            s,
            "registry sha256 {} ({} orders x {} encodings)",
            r.sha256.hex(),
            ORDERS.len(),
            ENCODINGS.len()
        );
    }
    for r in doc.initializers.iter().flatten() {
        let dims: Vec<String> = r.dims.iter().map(i64::to_string).collect();
        let _ = write!(
            s,
            "{:<32} {:<8} [{}] {}",
            r.name,
            r.data_type,
            dims.join(", "),
            r.result.as_str()
        );
        if let Some(reason) = &r.reason {
            let _ = write!(s, " ({reason})");
        }
        s.push('\n');
        for m in &r.matches {
            for o in &m.occurrences {
                let _ = writeln!(
                    s,
                    "    {} at 0x{:x} ({}+0x{:x}){}",
                    m.transform,
                    o.file_offset,
                    o.owner,
                    o.offset_in_owner,
                    if m.degenerate { " degenerate" } else { "" }
                );
            }
        }
    }
    for c in doc.graph.coverage.iter().flatten() {
        let _ = writeln!(
            s,
            "region {:<28} {:>8} bytes, {:>8} covered by initializers{}",
            c.owner,
            c.bytes,
            c.covered_bytes,
            if c.covered_bytes == 0 {
                " (content not found under any transform)"
            } else {
                ""
            }
        );
    }
    if let Some(sum) = &doc.summary {
        let _ = writeln!(
            s,
            "{} found, {} not found, {} skipped",
            sum.found, sum.not_found, sum.skipped
        );
    }
    s.push_str(&decoded(&doc.decoded));
    if let Some(l) = &doc.layers {
        s.push_str(&layers(l));
    }
    s
}

/// Each NN command against its layer: the operator its kernel pairs it with and every compared
/// quantity, or the operators with as many output elements.
fn layers(l: &Layers) -> String {
    let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join("x");
    let mut s = format!(
        "layers: {} NN commands: {} agree, {} disagree, {} not compared, {} accounted by elements, {} unaccounted\n",
        l.commands.len(),
        l.agree,
        l.disagree,
        l.not_compared,
        l.accounted,
        l.unaccounted
    );
    for c in &l.commands {
        let _ = write!(s, "  NN[{}] {}", c.command, c.verdict);
        match &c.operator {
            Some(p) => {
                let _ = write!(s, " op {} {} ({})", p.index, p.op, p.kernel);
                for x in &c.compared {
                    let mark = if x.equal { "=" } else { "!=" };
                    let _ = write!(
                        s,
                        "; {} {} {mark} {}",
                        x.field,
                        list(&x.nbg),
                        list(&x.model)
                    );
                    if let Some(n) = x.note {
                        let _ = write!(s, " ({n})");
                    }
                }
            }
            None => {
                let ops: Vec<String> = c
                    .same_elements
                    .iter()
                    .flatten()
                    .map(usize::to_string)
                    .collect();
                let _ = write!(s, "; {} output elements", c.out_elements);
                if !c.tiled_with.is_empty() {
                    let with: Vec<String> =
                        c.tiled_with.iter().map(|k| format!("NN[{k}]")).collect();
                    let _ = write!(s, ", tiled with {}", with.join(", "));
                }
                if !ops.is_empty() {
                    let _ = write!(s, ", as op {}", ops.join(", "));
                }
            }
        }
        s.push('\n');
    }
    s
}

/// The source tensors against the decoded kernels and biases: where each is, under which
/// layout and quantization, and how many of its elements are exact and consistent.
fn decoded(d: &Decoded) -> String {
    let mut s = format!(
        "decoded coefficients: {} buffers, {} put together, {} refused; {} zero-run buffers, {} TP parts, {} plain entries\n",
        d.buffers,
        d.buffers_decoded,
        d.buffers_refused,
        d.zero_run_buffers,
        d.tp_parts,
        d.plain_entries
    );
    for r in &d.tensors {
        let dims: Vec<String> = r.shape.iter().map(u64::to_string).collect();
        let _ = writeln!(s, "  {:<36} [{}] {}", r.name, dims.join(", "), found(r));
    }
    let sum = &d.summary;
    let (n, exact, consistent) = (sum.elements, sum.exact, sum.consistent);
    let pct = |x: u64| {
        if n == 0 {
            0.0
        } else {
            100.0 * x as f64 / n as f64
        }
    };
    let _ = writeln!(
        s,
        "{} of {} source tensors found; {n} elements: {exact} exact ({:.2} %), {consistent} consistent ({:.2} %)",
        sum.found,
        sum.tensors,
        pct(exact),
        pct(consistent)
    );
    s
}

/// Where one source tensor was found, or `not found`.
fn found(r: &Row) -> String {
    let Some(f) = &r.found else {
        return "not found".to_string();
    };
    let quant = match (f.quantization, f.quantization.name()) {
        (Quantization::Stored { less }, (ty, _)) => format!("{ty} less {less}"),
        (Quantization::InlineBias { input_zero_point }, (ty, _)) => {
            format!("{ty} input zero point {input_zero_point}")
        }
        (_, (ty, Some(p))) => format!("{ty} {p}"),
        (_, (ty, None)) => ty.to_string(),
    };
    let reader = match (f.command, f.operation) {
        (Some(c), _) if f.storage == Storage::Tp => format!("TP[{c}]"),
        (Some(c), _) if f.storage == Storage::ZeroRun => format!("NN[{c}] zero-run"),
        (Some(c), _) => format!("NN[{c}]"),
        (None, Some(o)) => format!("plain, op {o}"),
        (None, None) => "plain".to_string(),
    };
    let decimals = match f.decimals {
        Some(n) => format!(" of the source rounded to {n} decimals"),
        None => String::new(),
    };
    format!(
        "entry {} @0x{:x} {reader} {} {quant}{decimals}: {} exact, {} consistent of {}",
        f.entry,
        f.offset,
        f.layout.as_str(),
        f.exact,
        f.consistent,
        r.elements
    )
}

#[cfg(test)]
mod tests {
    use crate::lab::kernel_match::{Layout, Quantization, Summary};
    use crate::lab::locate::{Decoded, GraphFacts, Located, ModelFacts, Outcome};
    use serde_json::to_value;

    /// Names the text prints are the ones the JSON serializes.
    #[test]
    fn names_are_the_serialized_ones() {
        for o in [Outcome::Found, Outcome::NotFound, Outcome::Skipped] {
            assert_eq!(to_value(o).unwrap(), o.as_str());
        }
        for l in [
            Layout::Oihw,
            Layout::Ohwi,
            Layout::OneHwc,
            Layout::OneHwcDiagonal,
            Layout::Flat,
            Layout::StrideFold,
            Layout::Channels,
        ] {
            assert_eq!(to_value(l).unwrap(), l.as_str());
        }
        for q in [
            Quantization::Dfp { position: 7 },
            Quantization::DfpBias { position: 9 },
            Quantization::Affine {
                scale: 0.5,
                zero_point: 3,
            },
            Quantization::Fp16,
            Quantization::Bf16,
            Quantization::F32,
            Quantization::Stored { less: 10 },
            Quantization::InlineBias {
                input_zero_point: 128,
            },
        ] {
            let v = to_value(q).unwrap();
            let (ty, position) = q.name();
            assert_eq!(v["type"], ty);
            assert_eq!(v["position"].as_i64(), position.map(i64::from));
        }
    }

    /// A run on tensors (an .npz) used no registry, so its text names none.
    #[test]
    fn a_run_without_the_registry_names_none() {
        let doc = Located {
            schema: crate::lab::locate::SCHEMA,
            model: ModelFacts {
                sha256: crate::digest::Hash256::of(b"npz"),
                initializers: None,
                initializers_searched: None,
                tensors: Some(0),
            },
            graph: GraphFacts {
                format: "nbg-v2",
                sha256: crate::digest::Hash256::of(b"nb"),
                admitted: None,
                coverage: None,
            },
            registry: None,
            initializers: None,
            decoded: Decoded {
                buffers: 0,
                plain_entries: 0,
                buffers_decoded: 0,
                buffers_refused: 0,
                zero_run_buffers: 0,
                tp_parts: 0,
                tensors: Vec::new(),
                summary: Summary::default(),
            },
            summary: None,
            layers: None,
        };
        let text = super::text(&doc);
        assert!(
            text.starts_with("decoded coefficients: 0 buffers"),
            "{text}"
        );
        assert!(!text.contains("registry"), "{text}");
        let json = doc.to_json();
        assert!(json.get("registry").is_none() && json.get("registry_sha256").is_none());
    }
}
