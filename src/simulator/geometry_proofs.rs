//! Which NN command fields the real serializer is proved to write as the source layer says:
//! over the capture sets of the project's NN models (`models::nn`: conv 3x3, depthwise, Gemm,
//! int8, float16 and a 5x5 conv on a non-square image), every NN command the locator pairs
//! with its ONNX layer through its decoded kernel is compared with that layer's geometry
//! (`lab::layers`: input image, kernel size and depth, output image and channels), and its
//! fused `relu` and `pooling` with what the layer is followed by (a Relu, a max pooling). A part of
//! the command whose predicted value differs between the models, and which every file holds as
//! predicted, is proved: the serializer changed exactly that part as the model change
//! predicts. A part every model predicts the same value for is only `held`; a command whose
//! part differs from its layer is listed and fails the proof. The field map's `proved` labels
//! for the NN geometry rest on this, beside the mapping proofs (`lab::mapping::fields`).

use super::capture_sets::{SETS, folder};
use crate::lab::layers::{Operators, Verdict};
use crate::lab::locate::{LayerSource, locate};
use crate::nbg::family::NbgFamily;
use crate::nbg::fieldmap::{NN_LAYOUTS, Record};
use crate::nbg::format::records::operation_type::is_nn_engine;
use crate::onnx::proto::ModelProto;
use prost::Message as _;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One NN command part and the values the layers predicted for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GeometryProof {
    /// The command layout (`nn_command`, `nn_command_128`).
    pub record: &'static str,
    /// The bit-field word holding the part (`word1`).
    pub word: &'static str,
    /// The part (`in_image_y_size`).
    pub part: &'static str,
    /// The values the layers predicted and the commands held.
    pub values: BTreeSet<u64>,
    /// Commands compared.
    pub commands: usize,
}

/// A command whose part differs from its layer's prediction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Disagreement {
    /// The capture file, relative to the capture sets' folder.
    pub file: String,
    /// The NN command.
    pub command: usize,
    /// The compared quantity (`out_image`).
    pub field: &'static str,
    /// As the command holds it.
    pub nbg: Vec<u64>,
    /// As the layer predicts it.
    pub model: Vec<u64>,
}

/// What the layer check proves over the NN capture sets.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GeometryProofs {
    /// Capture files checked (A1 and B of each set).
    pub files: usize,
    /// Parts that took at least two values, each as its layer predicted.
    pub proved: Vec<GeometryProof>,
    /// Parts every layer predicted one value for.
    pub held: Vec<GeometryProof>,
    /// Commands that disagree with their layer.
    pub disagreements: Vec<Disagreement>,
    /// Capture files that could not be checked, with why.
    pub unchecked: Vec<String>,
}

impl GeometryProofs {
    /// The (record, word, part) triples proved.
    pub fn proved_parts(&self) -> BTreeSet<(&'static str, &'static str, &'static str)> {
        self.proved
            .iter()
            .map(|p| (p.record, p.word, p.part))
            .collect()
    }

    /// Whether the proof stands: nothing disagrees and every file was checked.
    pub fn holds(&self) -> bool {
        self.disagreements.is_empty() && self.unchecked.is_empty()
    }
}

/// What the operator at `index` is followed by, through its output's quantize and dequantize:
/// `(relu, pooling)` as the NN command would hold them fused, a Relu `(1, 0)`, a max or an
/// average pooling `(0, 1)` or `(0, 2)` (Mesa's `enum pooling_type`: NON, MAX, AVG), anything
/// else `(0, 0)`.
fn followed_by(ops: &Operators, index: usize) -> (u64, u64) {
    let mut at = ops.operators.get(index);
    // A few quantize/dequantize steps at most; a cycle in a hostile model ends here too.
    for _ in 0..4 {
        let output = at.and_then(|o| o.outputs.first());
        let next =
            output.and_then(|out| ops.operators.iter().find(|x| x.inputs.first() == Some(out)));
        match next.map(|n| n.op.as_str()) {
            Some("QUANTIZELINEAR" | "DEQUANTIZE") => at = next,
            Some("RELU") => return (1, 0),
            Some("MAXPOOL") => return (0, 1),
            Some("AVERAGEPOOL") => return (0, 2),
            _ => break,
        }
    }
    (0, 0)
}

/// The word of `record` holding part `part`.
fn word_of(record: &Record, part: &str) -> Option<&'static str> {
    record
        .fields
        .iter()
        .find(|f| f.parts.iter().any(|p| p.name == part))
        .map(|f| f.name)
}

/// Check every NN capture set under `dir` (`differentials/serializer`): the sets of `SETS`
/// whose model is one of `models::nn`, folders `NAME-PID`.
pub fn geometry_proofs(dir: &Path) -> GeometryProofs {
    let models: BTreeMap<&str, Vec<u8>> = super::models::nn()
        .into_iter()
        .map(|(name, _, bytes)| (name, bytes))
        .collect();
    let mut folders: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut out = GeometryProofs::default();
    let mut seen = Seen::new();
    for set in SETS {
        let Some(model) = models.get(set.model) else {
            continue;
        };
        // The set's folders on any part: `folder(name, pid)` for the PID its name ends with.
        let mine = folders.iter().filter(|f| {
            f.rsplit_once('-')
                .and_then(|(_, pid)| u32::from_str_radix(pid, 16).ok())
                .is_some_and(|pid| folder(set.name, pid) == **f)
        });
        for name in mine {
            for capture in ["A1.nb", "B.nb"] {
                let file = format!("{name}/{capture}");
                match check(model, &dir.join(&file), &file, &mut seen, &mut out) {
                    Ok(()) => out.files += 1,
                    Err(why) => out.unchecked.push(format!("{file}: {why}")),
                }
            }
        }
    }
    for (_, p) in seen {
        if p.values.len() >= 2 {
            out.proved.push(p);
        } else {
            out.held.push(p);
        }
    }
    out
}

/// Parts by (record, word, part), with the values files held them at.
type Seen = BTreeMap<(&'static str, &'static str, &'static str), GeometryProof>;

/// Part `part` of `record` held at `value` by one more command (a part the record does not
/// have is left out).
fn hold(seen: &mut Seen, record: &Record, part: &'static str, value: u64) {
    let Some(word) = word_of(record, part) else {
        return;
    };
    let p = seen
        .entry((record.id, word, part))
        .or_insert_with(|| GeometryProof {
            record: record.id,
            word,
            part,
            values: BTreeSet::new(),
            commands: 0,
        });
    p.values.insert(value);
    p.commands += 1;
}

/// One capture file against its model's layers, its agreeing commands' parts added to `seen`.
fn check(
    model: &[u8],
    path: &Path,
    file: &str,
    seen: &mut Seen,
    out: &mut GeometryProofs,
) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let graph = crate::nbg::parse::parse(&bytes).map_err(|f| f.to_string())?;
    let size = graph
        .records()
        .operations
        .iter()
        .flatten()
        .find_map(|o| o.instruction_bytes.filter(|_| is_nn_engine(o.kind())))
        .ok_or("no NN operation")?;
    let record = NN_LAYOUTS
        .into_iter()
        .find(|r| r.size as u64 == u64::from(size))
        .ok_or("an NN command size with no layout")?;
    let located = locate(model, &bytes, &LayerSource::Model).map_err(|e| e.to_string())?;
    let layers = located.layers.ok_or("no layer check")?;
    if layers.agree == 0 {
        return Err("no NN command paired with its layer".into());
    }
    let proto = ModelProto::decode(model).map_err(|e| e.to_string())?;
    let ops = Operators::of_onnx(&proto).map_err(|e| e.to_string())?;
    let view = graph.coefficient_view();
    for c in &layers.commands {
        // What the layer is followed by, against the command's fused ReLU and pooling.
        let fused = match (c.verdict, &c.operator, view.commands.get(c.command)) {
            (Verdict::Agrees, Some(p), Some(command)) => {
                let (relu, pooling) = followed_by(&ops, p.index);
                vec![
                    ("relu", command.relu, relu),
                    ("pooling", command.pooling, pooling),
                ]
            }
            _ => Vec::new(),
        };
        for (field, held, predicted) in fused {
            if held != predicted {
                out.disagreements.push(Disagreement {
                    file: file.to_string(),
                    command: c.command,
                    field,
                    nbg: vec![held],
                    model: vec![predicted],
                });
            } else {
                hold(seen, &record, field, predicted);
            }
        }
        for q in &c.compared {
            if !q.equal {
                out.disagreements.push(Disagreement {
                    file: file.to_string(),
                    command: c.command,
                    field: q.field,
                    nbg: q.nbg.clone(),
                    model: q.model.clone(),
                });
                continue;
            }
            if c.verdict != Verdict::Agrees {
                continue;
            }
            for (&part, &value) in q.parts.iter().zip(&q.model) {
                hold(seen, &record, part, value);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::layers::Operator;

    fn op(index: usize, op: &str, input: &str, output: &str) -> Operator {
        Operator {
            index,
            op: op.into(),
            inputs: vec![input.into()],
            outputs: vec![output.into()],
            input_shapes: Vec::new(),
            output_shapes: Vec::new(),
            options: serde_json::Map::new(),
        }
    }

    #[test]
    fn what_a_layer_is_followed_by_is_read_through_its_quantize_and_dequantize() {
        let chain = |last: &str| Operators {
            operators: vec![
                op(0, "CONV_2D", "x", "y"),
                op(1, "QUANTIZELINEAR", "y", "y_q"),
                op(2, "DEQUANTIZE", "y_q", "y_dq"),
                op(3, last, "y_dq", "z"),
            ],
        };
        assert_eq!(followed_by(&chain("RELU"), 0), (1, 0));
        assert_eq!(followed_by(&chain("MAXPOOL"), 0), (0, 1));
        assert_eq!(followed_by(&chain("AVERAGEPOOL"), 0), (0, 2));
        assert_eq!(followed_by(&chain("ADD"), 0), (0, 0));
        assert_eq!(followed_by(&chain("RELU"), 9), (0, 0));
        // A hostile model whose quantize and dequantize feed each other ends, unfused.
        let cycle = Operators {
            operators: vec![
                op(0, "CONV_2D", "x", "a"),
                op(1, "QUANTIZELINEAR", "a", "b"),
                op(2, "DEQUANTIZE", "b", "a"),
            ],
        };
        assert_eq!(followed_by(&cycle, 0), (0, 0));
    }
}
