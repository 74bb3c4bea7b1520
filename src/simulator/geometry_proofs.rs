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
use crate::onnx::proto::{GraphProto, ModelProto, NodeProto, data_type};
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

/// What a layer is followed by, as the NN command would hold it fused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fused {
    /// 1 after a Relu.
    relu: u64,
    /// Mesa's `enum pooling_type`: NON 0, MAX 1, AVG 2.
    pooling: u64,
    /// The pooling operator's index, when there is one.
    pool: Option<usize>,
}

/// What the operator at `index` is followed by, through its output's quantize and dequantize:
/// a Relu, a max or an average pooling, or nothing fused.
fn followed_by(ops: &Operators, index: usize) -> Fused {
    let mut at = ops.operators.get(index);
    let mut fused = Fused {
        relu: 0,
        pooling: 0,
        pool: None,
    };
    // A few quantize/dequantize steps at most; a cycle in a hostile model ends here too.
    for _ in 0..4 {
        let output = at.and_then(|o| o.outputs.first());
        let next =
            output.and_then(|out| ops.operators.iter().find(|x| x.inputs.first() == Some(out)));
        match next.map(|n| (n.op.as_str(), n.index)) {
            Some(("QUANTIZELINEAR" | "DEQUANTIZE", _)) => {
                at = next;
                continue;
            }
            Some(("RELU", _)) => fused.relu = 1,
            Some(("MAXPOOL", i)) => (fused.pooling, fused.pool) = (1, Some(i)),
            Some(("AVERAGEPOOL", i)) => (fused.pooling, fused.pool) = (2, Some(i)),
            _ => {}
        }
        break;
    }
    fused
}

/// `pooling_xy_size` as the vendor's NN command builder writes it (`getHwPoolingSze` in
/// `gc_vx_nn_command.c`, see [`hw_data_format`]): 0 for a window 2 wide, 1 for 3 wide, and -1
/// without pooling, which the one-bit field holds as 1; `None` for another window.
fn pooling_xy_size(graph: &GraphProto, pool: Option<usize>) -> Option<u64> {
    let Some(i) = pool else {
        return Some(1);
    };
    let width = crate::onnx::checker::ints_attr(graph.node.get(i)?, "kernel_shape")?.last()?;
    match width {
        2 => Some(0),
        3 => Some(1),
        _ => None,
    }
}

/// Part `part` of a command's words, `None` when `record` has no such part.
fn held(record: &Record, words: &[u32], part: &str) -> Option<u64> {
    let (field, part) = record.part(part)?;
    let word = words.get(field.offset / 4)?;
    Some(part.get(u64::from(*word)))
}

/// The hardware data format the vendor's NN command builder writes for an element type
/// (`getHWDataFormat` in flycat0101/gpu-viv6-andy 04c7e500,
/// `driver/driver/khronos/libOpenVX/driver/src/gc_vx_nn_command.c`: UINT8 0, FLOAT16 1, INT8
/// 2, INT16 4, BFLOAT16 7). A float32 tensor is compiled as float16 (`nbg vendor compile`).
fn hw_data_format(onnx_type: i32) -> Option<u64> {
    use crate::onnx::proto::data_type as t;
    match onnx_type {
        t::UINT8 => Some(0),
        t::FLOAT16 | t::FLOAT => Some(1),
        t::INT8 => Some(2),
        t::INT16 => Some(4),
        t::BFLOAT16 => Some(7),
        _ => None,
    }
}

/// The element type a QuantizeLinear or DequantizeLinear node stores: its zero point's (input
/// 2, an initializer), uint8 without one (the ONNX default).
fn stored_type(graph: &GraphProto, n: &NodeProto) -> Option<i32> {
    let Some(zp) = n.input.get(2).filter(|z| !z.is_empty()) else {
        return Some(data_type::UINT8);
    };
    graph
        .initializer
        .iter()
        .find(|t| t.name.as_ref() == Some(zp))
        .and_then(|t| t.data_type)
}

/// The data types the layer at node `index` predicts for its NN command: kernel (input 1) and
/// input image (input 0) as the DequantizeLinear that produces them stores them, output image
/// as the QuantizeLinear that reads it stores it, a tensor with neither being float. An int8
/// kernel is written as uint8, its zero point moved by 128, as Mesa writes every 8-bit kernel
/// (`etna_tensor_zero_point`, `kernel_data_type = ETNA_NN_INT8`, 0, in `etnaviv_ml_nn.c`);
/// the images keep their type. Each is the part of its name and, where the layout splits the
/// code, its `_bit_2` part.
fn data_types(graph: &GraphProto, index: usize, record: &Record) -> Vec<(&'static str, u64)> {
    let Some(n) = graph.node.get(index) else {
        return Vec::new();
    };
    let through = |tensor: Option<&String>, op: &str, producer: bool| {
        let tensor = tensor?;
        let q = graph.node.iter().find(|m| {
            m.op_type.as_deref() == Some(op)
                && if producer {
                    m.output.first() == Some(tensor)
                } else {
                    m.input.first() == Some(tensor)
                }
        });
        match q {
            Some(q) => stored_type(graph, q),
            None => Some(data_type::FLOAT),
        }
    };
    let types = [
        (
            "kernel_data_type",
            "kernel_data_type_bit_2",
            through(n.input.get(1), "DequantizeLinear", true).map(|t| {
                if t == data_type::INT8 {
                    data_type::UINT8
                } else {
                    t
                }
            }),
        ),
        (
            "in_image_data_type",
            "in_image_data_type_bit_2",
            through(n.input.first(), "DequantizeLinear", true),
        ),
        (
            "out_image_data_type",
            "out_image_data_type_bit_2",
            through(n.output.first(), "QuantizeLinear", false),
        ),
    ];
    let mut parts = Vec::new();
    for (name, bit_2, ty) in types {
        let Some(code) = ty.and_then(hw_data_format) else {
            continue;
        };
        if word_of(record, bit_2).is_some() {
            parts.extend([(name, code & 3), (bit_2, code >> 2)]);
        } else {
            parts.push((name, code));
        }
    }
    parts
}

/// The word of `record` holding part `part`.
fn word_of(record: &Record, part: &str) -> Option<&'static str> {
    record.part(part).map(|(f, _)| f.name)
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
    let graph_proto = proto.graph.as_ref();
    for c in &layers.commands {
        // The parts the paired layer predicts beside its geometry: what it is followed by
        // (fused ReLU and pooling) and the data types of its kernel, input and output.
        let predicted: Vec<(&'static str, u64, u64)> =
            match (c.verdict, &c.operator, view.commands.get(c.command)) {
                (Verdict::Agrees, Some(p), Some(command)) => {
                    let fused = followed_by(&ops, p.index);
                    let mut parts = vec![("relu", fused.relu), ("pooling", fused.pooling)];
                    if let Some(g) = graph_proto {
                        parts
                            .extend(pooling_xy_size(g, fused.pool).map(|v| ("pooling_xy_size", v)));
                        parts.extend(data_types(g, p.index, &record));
                    }
                    parts
                        .into_iter()
                        .filter_map(|(part, value)| {
                            Some((part, held(&record, &command.words, part)?, value))
                        })
                        .collect()
                }
                _ => Vec::new(),
            };
        for (field, held, predicted) in predicted {
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
        let fused = |ops: &Operators, i: usize| {
            let f = followed_by(ops, i);
            (f.relu, f.pooling, f.pool)
        };
        assert_eq!(fused(&chain("RELU"), 0), (1, 0, None));
        assert_eq!(fused(&chain("MAXPOOL"), 0), (0, 1, Some(3)));
        assert_eq!(fused(&chain("AVERAGEPOOL"), 0), (0, 2, Some(3)));
        assert_eq!(fused(&chain("ADD"), 0), (0, 0, None));
        assert_eq!(fused(&chain("RELU"), 9), (0, 0, None));
        // A hostile model whose quantize and dequantize feed each other ends, unfused.
        let cycle = Operators {
            operators: vec![
                op(0, "CONV_2D", "x", "a"),
                op(1, "QUANTIZELINEAR", "a", "b"),
                op(2, "DEQUANTIZE", "b", "a"),
            ],
        };
        assert_eq!(fused(&cycle, 0), (0, 0, None));
    }

    fn node(op: &str, inputs: &[&str], output: &str) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            input: inputs.iter().map(|i| i.to_string()).collect(),
            output: vec![output.into()],
            ..Default::default()
        }
    }

    fn zero_point(name: &str, t: i32) -> crate::onnx::proto::TensorProto {
        crate::onnx::proto::TensorProto {
            name: Some(name.into()),
            data_type: Some(t),
            ..Default::default()
        }
    }

    #[test]
    fn data_types_are_read_from_the_quantize_nodes_around_the_layer() {
        let record = crate::nbg::fieldmap::nn_command::RECORD;
        let graph = |x: i32, w: i32, y: i32| GraphProto {
            node: vec![
                node("DequantizeLinear", &["x_q", "s", "x_zp"], "x_dq"),
                node("DequantizeLinear", &["w_q", "s", "w_zp"], "w_dq"),
                node("Conv", &["x_dq", "w_dq"], "y"),
                node("QuantizeLinear", &["y", "s", "y_zp"], "y_q"),
            ],
            initializer: vec![
                zero_point("x_zp", x),
                zero_point("w_zp", w),
                zero_point("y_zp", y),
            ],
            ..Default::default()
        };
        let parts = |g: &GraphProto, index: usize| {
            data_types(g, index, &record)
                .into_iter()
                .filter(|(p, _)| !p.ends_with("_bit_2"))
                .map(|(_, v)| v)
                .collect::<Vec<_>>()
        };
        // Kernel, input and output: uint8 0; int8 images 2 with the int8 kernel as uint8.
        assert_eq!(
            parts(
                &graph(data_type::UINT8, data_type::UINT8, data_type::UINT8),
                2
            ),
            [0, 0, 0]
        );
        assert_eq!(
            parts(&graph(data_type::INT8, data_type::INT8, data_type::INT8), 2),
            [0, 2, 2]
        );
        // A float layer is compiled as float16; an unmapped type predicts nothing.
        let float = GraphProto {
            node: vec![node("Conv", &["x", "w"], "y")],
            ..Default::default()
        };
        assert_eq!(parts(&float, 0), [1, 1, 1]);
        assert_eq!(
            parts(
                &graph(data_type::INT32, data_type::UINT8, data_type::UINT8),
                2
            ),
            [0, 0]
        );
        // A 2-wide pooling window is 0, a 3-wide one 1, none -1 held as 1.
        let pool = |k: i64| GraphProto {
            node: vec![NodeProto {
                attribute: vec![crate::onnx::fixtures::ints("kernel_shape", &[k, k])],
                ..node("MaxPool", &["y"], "p")
            }],
            ..Default::default()
        };
        assert_eq!(pooling_xy_size(&pool(2), Some(0)), Some(0));
        assert_eq!(pooling_xy_size(&pool(3), Some(0)), Some(1));
        assert_eq!(pooling_xy_size(&pool(5), Some(0)), None);
        assert_eq!(pooling_xy_size(&pool(2), None), Some(1));
        assert_eq!(pooling_xy_size(&pool(2), Some(7)), None);
        // No node there predicts nothing; the 192-byte layout splits each code: bit 2 in word 15.
        assert!(data_types(&float, 2, &record).is_empty());
        assert!(data_types(&float, 0, &record).contains(&("in_image_data_type_bit_2", 0)));
    }
}
