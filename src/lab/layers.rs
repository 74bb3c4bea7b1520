//! NN commands against the layers of their source model. A command whose kernel `locate`
//! matched element for element to a source tensor is paired with the operator that consumes
//! that tensor (through DEQUANTIZE), and the command's decoded geometry is compared with the
//! operator's shapes. The operators come from an `.ops.json` as `../shared/models/tflite_facts.py`
//! writes one (operators in order, their input and output tensor names and shapes, NHWC, and
//! their options), or from an ONNX model's own graph in the same terms (`Operators::of_onnx`).
//! A command no kernel pairs (a reshape, transpose, pad or pool) is accounted for by its
//! elements.

use crate::lab::kernel_match::Row;
use crate::nbg::parse::command_tables::NnCommand;
use crate::onnx::checker::{int_attr, ints_attr, static_shapes, window_output};
use crate::onnx::proto::ModelProto;
use crate::onnx::refusal::Refusal;
use serde::{Deserialize, Serialize};

/// The operators of a source model.
#[derive(Clone, Debug, Deserialize)]
pub struct Operators {
    /// In model order.
    pub operators: Vec<Operator>,
}

/// One operator.
#[derive(Clone, Debug, Deserialize)]
pub struct Operator {
    /// Position in the model.
    pub index: usize,
    /// The builtin operator's name (`CONV_2D`, `DEPTHWISE_CONV_2D`, `DEQUANTIZE`, ...).
    pub op: String,
    /// Input tensor names.
    pub inputs: Vec<String>,
    /// Output tensor names.
    pub outputs: Vec<String>,
    /// Input shapes (NHWC for images), as the model declares them.
    pub input_shapes: Vec<Vec<i64>>,
    /// Output shapes.
    pub output_shapes: Vec<Vec<i64>>,
    /// The builtin options (`StrideW`, `StrideH`, `Padding`: 0 SAME, 1 VALID).
    #[serde(default)]
    pub options: serde_json::Map<String, serde_json::Value>,
}

impl Operator {
    fn option(&self, name: &str) -> Option<u64> {
        self.options.get(name)?.as_u64()
    }
}

impl Operators {
    /// An ONNX model's nodes in the `.ops.json` terms: images NHWC, a `Conv`'s weight as
    /// TFLite holds it (`CONV_2D` [O, KH, KW, I], a depthwise `Conv`, one group per input
    /// channel, `DEPTHWISE_CONV_2D` [1, KH, KW, C]), `Gemm` and `MatMul` as
    /// `FULLY_CONNECTED` with an [O, I] weight, `DequantizeLinear` as `DEQUANTIZE`; strides and
    /// padding (`Padding` 0 where the stride-1 output is the input's size, 1 where nothing is
    /// padded) as options. Shapes are the static ones the model declares or inference gives,
    /// carried through QuantizeLinear and DequantizeLinear (which keep their input's shape) and
    /// computed for a Conv (`window_output`) or a Gemm where neither gives them.
    pub fn of_onnx(model: &ModelProto) -> Result<Operators, Refusal> {
        let mut shapes = static_shapes(model)?;
        for n in model.graph.iter().flat_map(|g| &g.node) {
            let Some(out) = n.output.first().filter(|o| !shapes.contains_key(*o)) else {
                continue;
            };
            let input = |i: usize| n.input.get(i).and_then(|x| shapes.get(x));
            let derived = match (n.op_type.as_deref(), input(0), input(1)) {
                (Some("QuantizeLinear" | "DequantizeLinear"), Some(x), _) => Some(x.clone()),
                (Some("Conv"), Some(x), Some(w)) => window_output(n, x, Some(w)),
                (Some("Gemm"), Some(x), Some(w)) if x.len() == 2 && w.len() == 2 => {
                    let o = if int_attr(n, "transB") == Some(1) {
                        w[0]
                    } else {
                        w[1]
                    };
                    Some(vec![x[0], o])
                }
                _ => None,
            };
            if let Some(d) = derived {
                shapes.insert(out.clone(), d);
            }
        }
        let shape = |name: Option<&String>| {
            name.and_then(|n| shapes.get(n))
                .cloned()
                .unwrap_or_default()
        };
        let nhwc = |s: Vec<i64>| match s[..] {
            [n, c, h, w] => vec![n, h, w, c],
            _ => s,
        };
        let mut operators = Vec::new();
        for (index, n) in model.graph.iter().flat_map(|g| &g.node).enumerate() {
            let x = shape(n.input.first());
            let w = shape(n.input.get(1));
            let mut options = serde_json::Map::new();
            let (op, weight) = match (n.op_type.as_deref().unwrap_or(""), &w[..]) {
                ("Conv", &[o, i, kh, kw]) => {
                    let group = int_attr(n, "group").unwrap_or(1);
                    let strides = ints_attr(n, "strides").unwrap_or(&[1, 1]);
                    let pads = ints_attr(n, "pads").unwrap_or(&[0, 0, 0, 0]);
                    options.insert(
                        "StrideH".into(),
                        strides.first().copied().unwrap_or(1).into(),
                    );
                    options.insert(
                        "StrideW".into(),
                        strides.get(1).copied().unwrap_or(1).into(),
                    );
                    // The model's attributes are untrusted: no sum may overflow.
                    let sums = |a: i64, b: i64, k: i64| {
                        a.checked_add(b)
                            .is_some_and(|s| Some(s) == k.checked_sub(1))
                    };
                    let same =
                        pads.len() == 4 && sums(pads[0], pads[2], kh) && sums(pads[1], pads[3], kw);
                    if same || pads.iter().all(|&p| p == 0) {
                        options.insert("Padding".into(), u8::from(!same).into());
                    }
                    if group > 1 && i == 1 && x.get(1) == Some(&group) {
                        ("DEPTHWISE_CONV_2D".to_string(), vec![1, kh, kw, o])
                    } else {
                        ("CONV_2D".to_string(), vec![o, kh, kw, i])
                    }
                }
                ("Gemm", &[a, b]) => {
                    let t = int_attr(n, "transB") == Some(1);
                    (
                        "FULLY_CONNECTED".into(),
                        if t { vec![a, b] } else { vec![b, a] },
                    )
                }
                ("MatMul", &[i, o]) => ("FULLY_CONNECTED".into(), vec![o, i]),
                ("DequantizeLinear", _) => ("DEQUANTIZE".into(), w),
                (other, _) => (other.to_uppercase(), w),
            };
            operators.push(Operator {
                index,
                op,
                inputs: n.input.clone(),
                outputs: n.output.clone(),
                input_shapes: vec![nhwc(x), weight],
                output_shapes: vec![nhwc(shape(n.output.first()))],
                options,
            });
        }
        Ok(Operators { operators })
    }
}

/// How a command relates to its layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Paired through its kernel; every compared quantity is equal.
    Agrees,
    /// Paired through its kernel; a compared quantity differs.
    Disagrees,
    /// Paired through its kernel with an operator whose geometry no rule here compares.
    NotCompared,
    /// No kernel pairs it; some operator the kernels leave unpaired has as many output elements.
    Accounted,
    /// No kernel pairs it, and no operator has as many output elements.
    Unaccounted,
}

crate::canonical::names!(Verdict {
    Agrees => "agrees",
    Disagrees => "disagrees",
    NotCompared => "not-compared",
    Accounted => "accounted",
    Unaccounted => "unaccounted",
});

/// One quantity of a command against its layer.
#[derive(Clone, Debug, Serialize)]
pub struct Compared {
    /// The command's fields (`in_image`, `kernel`, `kernel_z`, `out_image`, `out_z`).
    pub field: &'static str,
    /// As the command holds it.
    pub nbg: Vec<u64>,
    /// As the layer predicts it.
    pub model: Vec<u64>,
    /// Whether they are equal.
    pub equal: bool,
    /// How the prediction was made, where it is not the layer's shape as declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
    /// The NN command parts (`fieldmap::nn_command`) that hold the quantity, one per value;
    /// empty where the prediction is not the layer's alone (a fully connected layer's kernel is
    /// the command's own input image, its inputs a product of three parts).
    #[serde(skip)]
    pub parts: Vec<&'static str>,
}

/// The operator a command is paired with.
#[derive(Clone, Debug, Serialize)]
pub struct Paired {
    /// Its position in the model.
    pub index: usize,
    /// Its name.
    pub op: String,
    /// The source tensor its kernel matched.
    pub kernel: String,
}

/// One NN command.
#[derive(Clone, Debug, Serialize)]
pub struct Command {
    /// Its position in the NN section or table.
    pub command: usize,
    /// The operator its kernel pairs it with.
    pub operator: Option<Paired>,
    /// The compared quantities.
    pub compared: Vec<Compared>,
    /// Output elements (`out_image` x * y * z).
    pub out_elements: u64,
    /// For a command no kernel pairs: the operators, not paired with any command, with as many
    /// output elements (with the commands of `tiled_with`, where the layer is split).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_elements: Option<Vec<usize>>,
    /// The neighbouring unpaired commands whose output elements, with this command's, are an
    /// operator's: one layer tiled over several commands.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tiled_with: Vec<usize>,
    /// The verdict.
    pub verdict: Verdict,
}

/// Every NN command of a graph against its source model's layers.
#[derive(Clone, Debug, Serialize)]
pub struct Layers {
    /// One per NN command, in command order.
    pub commands: Vec<Command>,
    /// Commands per verdict.
    pub agree: usize,
    /// Commands whose layer disagrees.
    pub disagree: usize,
    /// Paired commands not compared.
    pub not_compared: usize,
    /// Unpaired commands accounted for by elements.
    pub accounted: usize,
    /// Unpaired commands no operator accounts for.
    pub unaccounted: usize,
}

/// How many levels of DEQUANTIZE are followed from a constant to the operator that reads it.
const DEQUANTIZE_DEPTH: usize = 4;

/// Most consecutive unpaired commands one layer is taken to be tiled over.
const MAX_TILES: usize = 16;

/// The operator that reads tensor `name`, through at most `DEQUANTIZE_DEPTH` DEQUANTIZE ops.
fn consumer<'a>(ops: &'a [Operator], name: &str, depth: usize) -> Option<&'a Operator> {
    let op = ops.iter().find(|o| o.inputs.iter().any(|i| i == name))?;
    if op.op == "DEQUANTIZE" && depth > 0 {
        return consumer(ops, op.outputs.first()?, depth - 1);
    }
    Some(op)
}

/// The dimensions as unsigned sizes; `None` for an unknown (negative) one.
fn dims(shape: &[i64]) -> Option<Vec<u64>> {
    shape.iter().map(|&d| u64::try_from(d).ok()).collect()
}

fn compared(field: &'static str, nbg: Vec<u64>, model: Vec<u64>) -> Compared {
    use crate::nbg::fieldmap::nn_command as nn;
    let parts: &[crate::nbg::fieldmap::BitPart] = match field {
        "in_image" => &[nn::word1::in_image_x_size, nn::word1::in_image_y_size],
        "kernel" => &[nn::word0::kernel_xy_size, nn::word8::kernel_y_size],
        "kernel_z" => &[nn::word0::kernel_z_size],
        "out_image" => &[nn::word3::out_image_x_size, nn::word3::out_image_y_size],
        "out_z" => &[nn::word4::out_image_z_size],
        _ => &[],
    };
    let parts = parts.iter().map(|p| p.part.name).collect();
    Compared {
        equal: nbg == model,
        field,
        nbg,
        model,
        note: None,
        parts,
    }
}

/// A layer's geometry against the command's: a convolution (`CONV_2D`, weight [O, KH, KW, I];
/// `DEPTHWISE_CONV_2D`, weight [1, KH, KW, C]) or a fully connected layer; `None` for another
/// operator or shapes of another rank.
fn geometry(c: &NnCommand, op: &Operator) -> Option<Vec<Compared>> {
    let kernel = dims(op.input_shapes.get(1)?)?;
    let depthwise = match op.op.as_str() {
        "CONV_2D" => false,
        "DEPTHWISE_CONV_2D" => true,
        "FULLY_CONNECTED" => return fully_connected(c, &kernel),
        _ => return None,
    };
    let [_, h, w, _] = dims(op.input_shapes.first()?)?[..] else {
        return None;
    };
    let [_, oh, ow, oc] = dims(op.output_shapes.first()?)?[..] else {
        return None;
    };
    let [_, kh, kw, i] = kernel[..] else {
        return None;
    };
    let stride = [op.option("StrideW"), op.option("StrideH")];
    // The output the layer has at stride 1: its input for SAME padding, less the kernel for VALID.
    let stride_1 = match op.option("Padding") {
        Some(1) => [w.checked_sub(kw)? + 1, h.checked_sub(kh)? + 1],
        _ => [w, h],
    };
    let out = [c.out_image[0], c.out_image[1]];
    let mut out_image = compared("out_image", out.to_vec(), vec![ow, oh]);
    if !out_image.equal && stride.iter().any(|s| s.is_some_and(|s| s > 1)) && out == stride_1 {
        out_image = compared("out_image", out.to_vec(), stride_1.to_vec());
        out_image.note =
            Some("run at stride 1: the layer's stride is applied by another operation");
    }
    Some(vec![
        compared("in_image", c.in_image.to_vec(), vec![w, h]),
        compared("kernel", vec![c.kernel[0], c.kernel[1]], vec![kw, kh]),
        compared(
            "kernel_z",
            vec![c.kernel[2]],
            vec![if depthwise { 1 } else { i }],
        ),
        out_image,
        compared("out_z", vec![c.out_image[2]], vec![oc]),
    ])
}

/// A fully connected layer (weight [O, I]) as an NN command: one kernel that covers its whole
/// input image, whose x * y * z elements are the layer's I inputs, and a 1 x 1 x O output.
fn fully_connected(c: &NnCommand, weight: &[u64]) -> Option<Vec<Compared>> {
    let [o, i] = weight[..] else {
        return None;
    };
    let [ix, iy] = c.in_image;
    let mut kernel = compared("kernel", vec![c.kernel[0], c.kernel[1]], vec![ix, iy]);
    kernel.note = Some("a fully connected layer's kernel covers its whole input image");
    kernel.parts = Vec::new();
    Some(vec![
        compared("inputs", vec![ix * iy * c.kernel[2]], vec![i]),
        kernel,
        compared(
            "out_image",
            vec![c.out_image[0], c.out_image[1]],
            vec![1, 1],
        ),
        compared("out_z", vec![c.out_image[2]], vec![o]),
    ])
}

/// Every command of `commands` against `ops`, paired through the kernel tensors of `rows` (the
/// locator's matches).
pub fn check(commands: &[NnCommand], rows: &[Row], ops: &Operators) -> Layers {
    let ops = &ops.operators[..];
    let kernel_of = |k: usize| {
        rows.iter()
            .find(|r| r.shape.len() > 1 && r.found.as_ref().is_some_and(|f| f.command == Some(k)))
    };
    let paired: Vec<Option<(&Row, &Operator)>> = commands
        .iter()
        .map(|c| {
            let row = kernel_of(c.index)?;
            Some((row, consumer(ops, &row.name, DEQUANTIZE_DEPTH)?))
        })
        .collect();
    let used: std::collections::BTreeSet<usize> =
        paired.iter().flatten().map(|(_, op)| op.index).collect();
    // Untrusted dimensions: a product that overflows counts no elements.
    let elements =
        |shape: &[i64]| dims(shape).and_then(|d| d.iter().try_fold(1u64, |n, &x| n.checked_mul(x)));
    let mut out = Layers {
        commands: Vec::with_capacity(commands.len()),
        agree: 0,
        disagree: 0,
        not_compared: 0,
        accounted: 0,
        unaccounted: 0,
    };
    let same_elements = |n: u64| -> Vec<usize> {
        ops.iter()
            .filter(|o| o.op != "DEQUANTIZE" && !used.contains(&o.index))
            .filter(|o| {
                o.output_shapes
                    .first()
                    .and_then(|s| elements(s))
                    .is_some_and(|e| e == n)
            })
            .map(|o| o.index)
            .collect()
    };
    for (c, pair) in commands.iter().zip(paired) {
        let out_elements = c.out_image.iter().product();
        let command = match pair {
            Some((row, op)) => {
                let compared = geometry(c, op).unwrap_or_default();
                let verdict = if compared.is_empty() {
                    Verdict::NotCompared
                } else if compared.iter().all(|x| x.equal) {
                    Verdict::Agrees
                } else {
                    Verdict::Disagrees
                };
                Command {
                    command: c.index,
                    operator: Some(Paired {
                        index: op.index,
                        op: op.op.clone(),
                        kernel: row.name.clone(),
                    }),
                    compared,
                    out_elements,
                    same_elements: None,
                    tiled_with: Vec::new(),
                    verdict,
                }
            }
            None => {
                let same = same_elements(out_elements);
                Command {
                    command: c.index,
                    operator: None,
                    compared: Vec::new(),
                    out_elements,
                    verdict: if same.is_empty() {
                        Verdict::Unaccounted
                    } else {
                        Verdict::Accounted
                    },
                    same_elements: Some(same),
                    tiled_with: Vec::new(),
                }
            }
        };
        out.commands.push(command);
    }
    tiles(&mut out.commands, same_elements);
    for c in &out.commands {
        match c.verdict {
            Verdict::Agrees => out.agree += 1,
            Verdict::Disagrees => out.disagree += 1,
            Verdict::NotCompared => out.not_compared += 1,
            Verdict::Accounted => out.accounted += 1,
            Verdict::Unaccounted => out.unaccounted += 1,
        }
    }
    out
}

/// Runs of consecutive unpaired commands (at most `MAX_TILES`) that start at an unaccounted
/// one and whose output elements together are an operator's: each command of the run is
/// accounted for, tiled with the others.
fn tiles(commands: &mut [Command], same_elements: impl Fn(u64) -> Vec<usize>) {
    for i in 0..commands.len() {
        if commands[i].verdict != Verdict::Unaccounted {
            continue;
        }
        let mut total = 0u64;
        for j in i..commands.len().min(i + MAX_TILES) {
            if commands[j].operator.is_some() {
                break;
            }
            total = total.saturating_add(commands[j].out_elements);
            let same = same_elements(total);
            if j > i && !same.is_empty() {
                let run: Vec<usize> = commands[i..=j].iter().map(|c| c.command).collect();
                for c in &mut commands[i..=j] {
                    c.tiled_with = run.iter().copied().filter(|&k| k != c.command).collect();
                    c.same_elements = Some(same.clone());
                    c.verdict = Verdict::Accounted;
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(
        index: usize,
        kernel: [u64; 3],
        in_image: [u64; 2],
        out_image: [u64; 3],
    ) -> NnCommand {
        NnCommand {
            index,
            offset: 0,
            kernel,
            in_image,
            out_image,
            pooling: 0,
            relu: 0,
            words: Vec::new(),
        }
    }

    fn operator(op: &str, x: &[i64], w: &[i64], y: &[i64], options: &[(&str, u64)]) -> Operator {
        Operator {
            index: 0,
            op: op.into(),
            inputs: vec![],
            outputs: vec![],
            input_shapes: vec![x.to_vec(), w.to_vec()],
            output_shapes: vec![y.to_vec()],
            options: options
                .iter()
                .map(|&(k, v)| (k.to_string(), v.into()))
                .collect(),
        }
    }

    #[test]
    fn a_stride_2_layer_agrees_at_its_stride_1_output_only() {
        let conv = |padding: u64| {
            operator(
                "CONV_2D",
                &[1, 16, 16, 3],
                &[8, 3, 3, 3],
                &[1, 8, 8, 8],
                &[("StrideW", 2), ("StrideH", 2), ("Padding", padding)],
            )
        };
        // SAME: the stride-1 output is the input's size.
        let same = geometry(&command(0, [3, 3, 3], [16, 16], [16, 16, 8]), &conv(0)).unwrap();
        let out = same.iter().find(|c| c.field == "out_image").unwrap();
        assert!(out.equal && out.note.is_some(), "{out:?}");
        // VALID: the input less the kernel, plus one.
        let valid = geometry(&command(0, [3, 3, 3], [16, 16], [14, 14, 8]), &conv(1)).unwrap();
        assert!(valid.iter().all(|c| c.equal), "{valid:?}");
        // Neither the layer's output nor its stride-1 output: a disagreement.
        let off = geometry(&command(0, [3, 3, 3], [16, 16], [12, 12, 8]), &conv(0)).unwrap();
        assert!(!off.iter().find(|c| c.field == "out_image").unwrap().equal);
        // The output channels are the layer's.
        let z = geometry(&command(0, [3, 3, 3], [16, 16], [8, 8, 7]), &conv(0)).unwrap();
        assert!(!z.iter().find(|c| c.field == "out_z").unwrap().equal);
    }

    #[test]
    fn a_fully_connected_layer_is_one_kernel_over_its_input_image() {
        let fc = operator("FULLY_CONNECTED", &[1, 16], &[8, 16], &[1, 8], &[]);
        let ok = geometry(&command(0, [8, 2, 1], [8, 2], [1, 1, 8]), &fc).unwrap();
        assert!(ok.iter().all(|c| c.equal), "{ok:?}");
        let short = geometry(&command(0, [4, 2, 1], [8, 2], [1, 1, 8]), &fc).unwrap();
        assert!(short.iter().any(|c| !c.equal));
    }

    /// An operators file is untrusted: overflowing or negative dimensions, a DEQUANTIZE that
    /// feeds itself and pads that overflow give no pairing and no panic.
    #[test]
    fn hostile_operators_give_no_pairing_and_no_panic() {
        let mut loop_op = operator("DEQUANTIZE", &[-1], &[], &[i64::MAX, i64::MAX, 2], &[]);
        loop_op.inputs = vec!["w".into()];
        loop_op.outputs = vec!["w".into()];
        let ops = Operators {
            operators: vec![loop_op],
        };
        assert_eq!(
            consumer(&ops.operators, "w", DEQUANTIZE_DEPTH).map(|o| o.index),
            Some(0)
        );
        let l = check(&[command(0, [1, 1, 1], [4, 4], [4, 4, 1])], &[], &ops);
        assert_eq!(l.unaccounted, 1);
        let conv = operator("CONV_2D", &[1, -4, 4, 1], &[1, 3, 3, 1], &[1, 2, 2, 1], &[]);
        assert!(geometry(&command(0, [3, 3, 1], [4, 4], [2, 2, 1]), &conv).is_none());
    }

    #[test]
    fn unpaired_neighbours_tile_one_layer_and_a_paired_command_ends_the_run() {
        let unpaired = |command: usize, out_elements: u64| Command {
            command,
            operator: None,
            compared: Vec::new(),
            out_elements,
            same_elements: Some(Vec::new()),
            tiled_with: Vec::new(),
            verdict: Verdict::Unaccounted,
        };
        let same = |n: u64| if n == 8192 { vec![5] } else { Vec::new() };
        let mut run = vec![unpaired(0, 4096), unpaired(1, 4096), unpaired(2, 100)];
        tiles(&mut run, same);
        assert_eq!(run[0].verdict, Verdict::Accounted);
        assert_eq!(run[0].tiled_with, [1]);
        assert_eq!(run[1].tiled_with, [0]);
        assert_eq!(run[2].verdict, Verdict::Unaccounted);
        let mut broken = vec![unpaired(0, 4096), unpaired(1, 4096)];
        broken[1].operator = Some(Paired {
            index: 1,
            op: "CONV_2D".into(),
            kernel: "k".into(),
        });
        tiles(&mut broken, same);
        assert_eq!(broken[0].verdict, Verdict::Unaccounted);
    }
}
