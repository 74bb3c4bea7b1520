//! The project's own tiny ONNX models for the vendor's serializer: one per covered operator
//! family, float32 (compiled to float16) and QDQ uint8/int8, one and several inputs and
//! outputs. Weights come from the builder's SplitMix64, so every model is fixed forever;
//! `nbg vendor models -o DIR` writes them.

use crate::lab::synth::Rng;
use crate::onnx::fixtures;
use crate::onnx::proto::*;
use prost::Message as _;

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// A float32 graph input or output of a static shape (the fixtures' value builder).
fn value(name: &str, dims: &[i64]) -> ValueInfoProto {
    let dims: Vec<Option<i64>> = dims.iter().copied().map(Some).collect();
    fixtures::tensor_value(name, data_type::FLOAT, &dims, &[])
}

fn tensor(name: &str, dt: i32, dims: &[i64], raw: Vec<u8>) -> TensorProto {
    TensorProto {
        dims: dims.to_vec(),
        data_type: Some(dt),
        name: s(name),
        raw_data: Some(raw),
        ..Default::default()
    }
}

/// A float initializer of pseudo-random values in [-1, 1).
fn floats(rng: &mut Rng, name: &str, dims: &[i64]) -> TensorProto {
    let n: i64 = dims.iter().product();
    let values: Vec<f32> = (0..n)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        .collect();
    fixtures::float_tensor(name, dims, &values)
}

fn scalar_f32(name: &str, v: f32) -> TensorProto {
    fixtures::float_tensor(name, &[], &[v])
}

fn attr_int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: s(name),
        i: Some(v),
        r#type: Some(attribute_type::INT),
        ..Default::default()
    }
}

/// A node named after its operator and first output (the fixtures' node builder).
fn node(op: &str, inputs: &[&str], outputs: &[&str], attribute: Vec<AttributeProto>) -> NodeProto {
    let name = format!("{}_{}", op.to_lowercase(), outputs[0]);
    fixtures::node(op, &name, inputs, outputs, attribute)
}

fn model(
    name: &str,
    nodes: Vec<NodeProto>,
    inits: Vec<TensorProto>,
    inputs: &[(&str, &[i64])],
    outputs: &[(&str, &[i64])],
) -> Vec<u8> {
    let mut m = fixtures::model(GraphProto {
        node: nodes,
        name: s(name),
        initializer: inits,
        input: inputs.iter().map(|(n, d)| value(n, d)).collect(),
        output: outputs.iter().map(|(n, d)| value(n, d)).collect(),
        ..Default::default()
    });
    m.producer_version = s("vendor-models/1");
    m.encode_to_vec()
}

/// Quantize-dequantize parameters of one value: its scale and zero point initializers and the
/// two nodes (`x` -> `x_q` -> `x_dq`).
fn qdq(x: &str, scale: f32, zero_point: u8, signed: bool) -> (Vec<TensorProto>, Vec<NodeProto>) {
    let (sn, zn) = (format!("{x}_scale"), format!("{x}_zp"));
    let zp = if signed {
        tensor(&zn, data_type::INT8, &[], vec![zero_point])
    } else {
        tensor(&zn, data_type::UINT8, &[], vec![zero_point])
    };
    (
        vec![scalar_f32(&sn, scale), zp],
        vec![
            node(
                "QuantizeLinear",
                &[x, &sn, &zn],
                &[&format!("{x}_q")],
                vec![],
            ),
            node(
                "DequantizeLinear",
                &[&format!("{x}_q"), &sn, &zn],
                &[&format!("{x}_dq")],
                vec![],
            ),
        ],
    )
}

/// A quantized constant: `name_q` (uint8 elements, or int8 where `signed`) dequantized to
/// `name_dq`.
fn quantized_const(
    rng: &mut Rng,
    name: &str,
    dims: &[i64],
    scale: f32,
    zero_point: u8,
    signed: bool,
) -> (Vec<TensorProto>, NodeProto) {
    let n: i64 = dims.iter().product();
    let q: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
    let (sn, zn) = (format!("{name}_scale"), format!("{name}_zp"));
    let dt = if signed {
        data_type::INT8
    } else {
        data_type::UINT8
    };
    (
        vec![
            tensor(&format!("{name}_q"), dt, dims, q),
            scalar_f32(&sn, scale),
            tensor(&zn, dt, &[], vec![zero_point]),
        ],
        node(
            "DequantizeLinear",
            &[&format!("{name}_q"), &sn, &zn],
            &[&format!("{name}_dq")],
            vec![],
        ),
    )
}

/// A quantized int32 bias of `n` channels: `b_q` (uniform in [-half, half)) with scale `scale`
/// and zero point 0, dequantized to `b_dq`.
fn int32_bias(rng: &mut Rng, n: usize, half: u64, scale: f32) -> (Vec<TensorProto>, NodeProto) {
    named_bias(rng, "b", n, half, scale)
}

/// `int32_bias` named `name` (`name_q`, `name_scale`, `name_zp`, `name_dq`).
fn named_bias(
    rng: &mut Rng,
    name: &str,
    n: usize,
    half: u64,
    scale: f32,
) -> (Vec<TensorProto>, NodeProto) {
    let q: Vec<u8> = (0..n)
        .flat_map(|_| ((rng.next_u64() % (2 * half)) as i32 - half as i32).to_le_bytes())
        .collect();
    let (bq, bs, bz, bd) = (
        format!("{name}_q"),
        format!("{name}_scale"),
        format!("{name}_zp"),
        format!("{name}_dq"),
    );
    (
        vec![
            tensor(&bq, data_type::INT32, &[n as i64], q),
            scalar_f32(&bs, scale),
            tensor(&bz, data_type::INT32, &[], 0i32.to_le_bytes().to_vec()),
        ],
        node("DequantizeLinear", &[&bq, &bs, &bz], &[&bd], vec![]),
    )
}

/// The models, by name: (name, what it covers, ONNX bytes).
pub fn all() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let mut rng = Rng::new(0x5e71);
    let r = &mut rng;
    let x4: &[i64] = &[1, 4, 8, 8];
    let mut out = vec![
        (
            "add-const-fp16",
            "Add of the input and a constant (float32 -> float16)",
            model(
                "add_const",
                vec![node("Add", &["x", "c"], &["y"], vec![])],
                vec![floats(r, "c", &[1, 2, 4, 4])],
                &[("x", &[1, 2, 4, 4])],
                &[("y", &[1, 2, 4, 4])],
            ),
        ),
        (
            "conv-fp16",
            "Conv 3x3 pad 1 with bias",
            model(
                "conv",
                vec![node(
                    "Conv",
                    &["x", "w", "b"],
                    &["y"],
                    vec![
                        fixtures::ints("kernel_shape", &[3, 3]),
                        fixtures::ints("pads", &[1, 1, 1, 1]),
                    ],
                )],
                vec![floats(r, "w", &[8, 4, 3, 3]), floats(r, "b", &[8])],
                &[("x", x4)],
                &[("y", &[1, 8, 8, 8])],
            ),
        ),
        (
            "conv-relu-maxpool-fp16",
            "Conv, Relu, MaxPool 2x2 stride 2",
            model(
                "conv_relu_maxpool",
                vec![
                    node(
                        "Conv",
                        &["x", "w", "b"],
                        &["c"],
                        vec![
                            fixtures::ints("kernel_shape", &[3, 3]),
                            fixtures::ints("pads", &[1, 1, 1, 1]),
                        ],
                    ),
                    node("Relu", &["c"], &["r"], vec![]),
                    node(
                        "MaxPool",
                        &["r"],
                        &["y"],
                        vec![
                            fixtures::ints("kernel_shape", &[2, 2]),
                            fixtures::ints("strides", &[2, 2]),
                        ],
                    ),
                ],
                vec![floats(r, "w", &[8, 4, 3, 3]), floats(r, "b", &[8])],
                &[("x", x4)],
                &[("y", &[1, 8, 4, 4])],
            ),
        ),
        (
            "gemm-softmax-fp16",
            "Gemm (transB = 1) with bias, Softmax",
            model(
                "gemm_softmax",
                vec![
                    node(
                        "Gemm",
                        &["x", "w", "b"],
                        &["g"],
                        vec![attr_int("transB", 1)],
                    ),
                    node("Softmax", &["g"], &["y"], vec![attr_int("axis", -1)]),
                ],
                vec![floats(r, "w", &[8, 16]), floats(r, "b", &[8])],
                &[("x", &[1, 16])],
                &[("y", &[1, 8])],
            ),
        ),
        (
            "matmul-fp16",
            "MatMul with a constant [K, N]",
            model(
                "matmul",
                vec![node("MatMul", &["x", "w"], &["y"], vec![])],
                vec![floats(r, "w", &[16, 8])],
                &[("x", &[1, 16])],
                &[("y", &[1, 8])],
            ),
        ),
        (
            "mul-sigmoid-tanh-fp16",
            "Mul by a constant, Sigmoid, Tanh",
            model(
                "mul_sigmoid_tanh",
                vec![
                    node("Mul", &["x", "c"], &["m"], vec![]),
                    node("Sigmoid", &["m"], &["s"], vec![]),
                    node("Tanh", &["s"], &["y"], vec![]),
                ],
                vec![floats(r, "c", &[1, 2, 4, 4])],
                &[("x", &[1, 2, 4, 4])],
                &[("y", &[1, 2, 4, 4])],
            ),
        ),
        (
            "avgpool-global-fp16",
            "AveragePool 2x2 stride 2, then GlobalAveragePool",
            model(
                "avgpool_global",
                vec![
                    node(
                        "AveragePool",
                        &["x"],
                        &["a"],
                        vec![
                            fixtures::ints("kernel_shape", &[2, 2]),
                            fixtures::ints("strides", &[2, 2]),
                        ],
                    ),
                    node("GlobalAveragePool", &["a"], &["y"], vec![]),
                ],
                vec![],
                &[("x", x4)],
                &[("y", &[1, 4, 1, 1])],
            ),
        ),
        (
            "concat-two-in-two-out-fp16",
            "Concat of two inputs on the channel axis; two outputs (the concat and a Relu of it)",
            model(
                "concat_two",
                vec![
                    node("Concat", &["a", "b"], &["y0"], vec![attr_int("axis", 1)]),
                    node("Relu", &["y0"], &["y1"], vec![]),
                ],
                vec![],
                &[("a", &[1, 2, 4, 4]), ("b", &[1, 2, 4, 4])],
                &[("y0", &[1, 4, 4, 4]), ("y1", &[1, 4, 4, 4])],
            ),
        ),
        (
            "flatten-gemm-fp16",
            "Flatten then Gemm",
            model(
                "flatten_gemm",
                vec![
                    node("Flatten", &["x"], &["f"], vec![attr_int("axis", 1)]),
                    node(
                        "Gemm",
                        &["f", "w", "b"],
                        &["y"],
                        vec![attr_int("transB", 1)],
                    ),
                ],
                vec![floats(r, "w", &[10, 32]), floats(r, "b", &[10])],
                &[("x", &[1, 2, 4, 4])],
                &[("y", &[1, 10])],
            ),
        ),
    ];
    // QDQ uint8 conv: input scale 0.5 zp 128, weights 0.25 zp 10, int32 bias, output 2.0 zp 5.
    {
        let (mut inits, mut nodes) = qdq("x", 0.5, 128, false);
        let (w, wn) = quantized_const(r, "w", &[8, 4, 3, 3], 0.25, 10, false);
        inits.extend(w);
        nodes.push(wn);
        let (b, bn) = int32_bias(r, 8, 256, 0.125);
        inits.extend(b);
        nodes.push(bn);
        nodes.push(node(
            "Conv",
            &["x_dq", "w_dq", "b_dq"],
            &["y"],
            vec![fixtures::ints("kernel_shape", &[3, 3])],
        ));
        let (o, on) = qdq("y", 2.0, 5, false);
        inits.extend(o);
        nodes.extend(on);
        out.push((
            "conv-qdq-u8",
            "QDQ uint8 Conv 3x3 (input 0.5/128, weights 0.25/10, int32 bias, output 2/5)",
            model(
                "conv_qdq_u8",
                nodes,
                inits,
                &[("x", &[1, 4, 8, 8])],
                &[("y_dq", &[1, 8, 6, 6])],
            ),
        ));
    }
    // QDQ uint8 fully connected: [1, 16] x [8, 16]^T (transB = 1), int32 bias, two outputs
    // (the logits and a Relu of them).
    out.push((
        "gemm-relu-qdq-u8",
        "QDQ uint8 Gemm (transB = 1) with int32 bias, then Relu; two outputs",
        gemm_relu(r, "gemm_relu_qdq_u8", ["x", "w", "b", "g", "r"]),
    ));
    // QDQ int8 Add of two inputs.
    {
        let (mut inits, mut nodes) = qdq("a", 0.05, 0, true);
        let (bi, bn) = qdq("b", 0.05, 0, true);
        inits.extend(bi);
        nodes.extend(bn);
        nodes.push(node("Add", &["a_dq", "b_dq"], &["y"], vec![]));
        let (o, on) = qdq("y", 0.1, 0, true);
        inits.extend(o);
        nodes.extend(on);
        out.push((
            "add-qdq-i8",
            "QDQ int8 Add of two inputs",
            model(
                "add_qdq_i8",
                nodes,
                inits,
                &[("a", &[1, 2, 4, 4]), ("b", &[1, 2, 4, 4])],
                &[("y_dq", &[1, 2, 4, 4])],
            ),
        ));
    }
    out
}

/// QDQ uint8 fully connected: [1, 16] x [8, 16]^T (transB = 1), int32 bias, two outputs (the
/// logits and a Relu of them), its values named `[input, weight, bias, logits, relu]`.
fn gemm_relu(r: &mut Rng, graph: &str, names: [&str; 5]) -> Vec<u8> {
    let [x, w, b, g, relu] = names;
    let dq = |v: &str| format!("{v}_dq");
    let (mut inits, mut nodes) = qdq(x, 0.02, 128, false);
    let (wi, wn) = quantized_const(r, w, &[8, 16], 0.01, 128, false);
    inits.extend(wi);
    nodes.push(wn);
    let (bi, bn) = named_bias(r, b, 8, 1024, 0.0002);
    inits.extend(bi);
    nodes.push(bn);
    nodes.push(node(
        "Gemm",
        &[&dq(x), &dq(w), &dq(b)],
        &[g],
        vec![attr_int("transB", 1)],
    ));
    let (gi, gn) = qdq(g, 0.1, 128, false);
    inits.extend(gi);
    nodes.extend(gn);
    nodes.push(node("Relu", &[&dq(g)], &[relu], vec![]));
    let (o, on) = qdq(relu, 0.1, 128, false);
    inits.extend(o);
    nodes.extend(on);
    model(
        graph,
        nodes,
        inits,
        &[(x, &[1, 16])],
        &[(&dq(g), &[1, 8]), (&dq(relu), &[1, 8])],
    )
}

/// Every model a capture set starts from: `all`, `nn` and `named`, by name.
pub fn bases() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    all().into_iter().chain(nn()).chain(named()).collect()
}

/// Models as a user writes them, never the project's names (`img`, `k`, `bb`, `c`, `r`): the
/// second models every promoted serializer mapping is proved on (issue 66), so that a mapping
/// keyed by a role (`zero-point:Conv.weight`) is shown to hold whatever the tensors are called
/// and whatever surrounds the quantity. A Relu after the Conv leaves the Conv's input a graph
/// input; a Relu before it leaves its output the graph output; padding moves its shader's
/// uniforms; the Add, static, float16 and Gemm models match the other sets' kinds.
pub fn named() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let mut rng = Rng::new(0x757365);
    let r = &mut rng;
    let mut out = Vec::new();
    for (name, what, before) in [
        (
            "user-conv-relu-u8",
            "QDQ uint8 Conv 3x3 then Relu, quantized between, in a user's names",
            false,
        ),
        (
            "user-relu-conv-u8",
            "QDQ uint8 Relu then Conv 3x3, quantized between, in a user's names",
            true,
        ),
    ] {
        let (mut inits, mut nodes) = qdq("img", 0.5, 128, false);
        let mut input = "img_dq";
        if before {
            nodes.push(node("Relu", &["img_dq"], &["pos"], vec![]));
            let (i, n) = qdq("pos", 0.5, 128, false);
            inits.extend(i);
            nodes.extend(n);
            input = "pos_dq";
        }
        let (k, kn) = quantized_const(r, "k", &[8, 4, 3, 3], 0.25, 10, false);
        inits.extend(k);
        nodes.push(kn);
        let (b, bn) = named_bias(r, "bb", 8, 256, 0.125);
        inits.extend(b);
        nodes.push(bn);
        nodes.push(node(
            "Conv",
            &[input, "k_dq", "bb_dq"],
            &["c"],
            vec![fixtures::ints("kernel_shape", &[3, 3])],
        ));
        let (c, cn) = qdq("c", 2.0, 5, false);
        inits.extend(c);
        nodes.extend(cn);
        let mut output = "c_dq";
        if !before {
            nodes.push(node("Relu", &["c_dq"], &["r"], vec![]));
            let (o, on) = qdq("r", 2.0, 5, false);
            inits.extend(o);
            nodes.extend(on);
            output = "r_dq";
        }
        out.push((
            name,
            what,
            model(
                &name.replace('-', "_"),
                nodes,
                inits,
                &[("img", &[1, 4, 8, 8])],
                &[(output, &[1, 8, 6, 6])],
            ),
        ));
    }
    // A "same"-padded Conv (8x8 out): another shader, whose uniforms sit elsewhere in
    // LOADSTATE (measured), so the mappings that find them by value are held to it.
    {
        let (mut inits, mut nodes) = qdq("pic", 0.5, 128, false);
        let (k, kn) = quantized_const(r, "wt", &[8, 4, 3, 3], 0.25, 10, false);
        inits.extend(k);
        nodes.push(kn);
        let (b, bn) = named_bias(r, "bias", 8, 256, 0.125);
        inits.extend(b);
        nodes.push(bn);
        nodes.push(node(
            "Conv",
            &["pic_dq", "wt_dq", "bias_dq"],
            &["feat"],
            vec![
                fixtures::ints("kernel_shape", &[3, 3]),
                fixtures::ints("pads", &[1, 1, 1, 1]),
            ],
        ));
        let (c, cn) = qdq("feat", 2.0, 5, false);
        inits.extend(c);
        nodes.extend(cn);
        out.push((
            "user-conv-pad-u8",
            "QDQ uint8 Conv 3x3 padded to 8x8, in a user's names",
            model(
                "user_conv_pad_u8",
                nodes,
                inits,
                &[("pic", &[1, 4, 8, 8])],
                &[("feat_dq", &[1, 8, 8, 8])],
            ),
        ));
    }
    // The Relu after the Conv again, its constants static, for the parts that run it on NN.
    let conv_relu = out[0].2.clone();
    out.push((
        "user-conv-relu-nn-u8",
        "user-conv-relu-u8 with static constants: on NN",
        static_constants(&conv_relu),
    ));
    // A float Conv then Relu, static constants: on NN on 0x1000000e.
    let fp16 = model(
        "user_conv_relu_fp16",
        vec![
            node(
                "Conv",
                &["img", "k", "bb"],
                &["c"],
                vec![fixtures::ints("kernel_shape", &[3, 3])],
            ),
            node("Relu", &["c"], &["out"], vec![]),
        ],
        vec![floats(r, "k", &[8, 4, 3, 3]), floats(r, "bb", &[8])],
        &[("img", &[1, 4, 8, 8])],
        &[("out", &[1, 8, 6, 6])],
    );
    out.push((
        "user-conv-relu-nn-fp16",
        "Conv 3x3 then Relu (float32 -> float16), static constants, in a user's names",
        static_constants(&fp16),
    ));
    // A Gemm and a Relu, both outputs kept, as the gemm sets' (the lowering takes a quantized
    // weight as [N, K] only, so the graph is theirs; the names are the user's).
    out.push((
        "user-gemm-relu-u8",
        "QDQ uint8 Gemm (transB = 1) then Relu, two outputs, in a user's names",
        gemm_relu(
            r,
            "user_gemm_relu_u8",
            ["feat", "fc", "fcb", "logits", "act"],
        ),
    ));
    // A float Relu, then the added constant.
    let offs = floats(r, "offs", &[1, 2, 4, 4]);
    out.push((
        "user-relu-add-fp16",
        "Relu then Add of a constant (float32 -> float16), in a user's names",
        model(
            "user_relu_add_fp16",
            vec![
                node("Relu", &["img"], &["pos"], vec![]),
                node("Add", &["pos", "offs"], &["out"], vec![]),
            ],
            vec![offs],
            &[("img", &[1, 2, 4, 4])],
            &[("out", &[1, 2, 4, 4])],
        ),
    ));
    out
}

/// Models whose constants are static (`plan::LIFETIME_KEY`), so that the driver runs their
/// convolutions and fully connected layers on the NN engine (measured on 0x1000003b and 0x9f;
/// without it every one runs on a shader): the bases of the NN capture sets, whose coefficient
/// streams B changes element by element. Not part of `all`: their files are those sets' A.
pub fn nn() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let mut rng = Rng::new(0x4e4e);
    let r = &mut rng;
    // A QDQ layer: input `x`, constant weights and an int32 bias, output `y` (int8 where
    // `signed`, zero points then 0).
    let layer = |r: &mut Rng,
                 name: &'static str,
                 what: &'static str,
                 signed: bool,
                 op: (&str, Vec<AttributeProto>),
                 w: &[i64],
                 x: &[i64],
                 y: &[i64]| {
        let zp = |u: u8| if signed { 0 } else { u };
        let (mut inits, mut nodes) = qdq("x", 0.5, zp(128), signed);
        let (wi, wn) = quantized_const(r, "w", w, 0.25, zp(10), signed);
        inits.extend(wi);
        nodes.push(wn);
        let (b, bn) = int32_bias(r, w[0] as usize, 256, 0.125);
        inits.extend(b);
        nodes.push(bn);
        nodes.push(node(op.0, &["x_dq", "w_dq", "b_dq"], &["y"], op.1));
        let (o, on) = qdq("y", 2.0, zp(5), signed);
        inits.extend(o);
        nodes.extend(on);
        let m = model(
            &name.replace('-', "_"),
            nodes,
            inits,
            &[("x", x)],
            &[("y_dq", y)],
        );
        (name, what, static_constants(&m))
    };
    let conv = || ("Conv", vec![fixtures::ints("kernel_shape", &[3, 3])]);
    let mut out = vec![
        layer(
            r,
            "conv-nn-u8",
            "QDQ uint8 Conv 3x3 (weights 0.25/10), static constants: on NN",
            false,
            conv(),
            &[8, 4, 3, 3],
            &[1, 4, 8, 8],
            &[1, 8, 6, 6],
        ),
        layer(
            r,
            "conv-nn-i8",
            "QDQ int8 Conv 3x3 (zero points 0), static constants: on NN",
            true,
            conv(),
            &[8, 4, 3, 3],
            &[1, 4, 8, 8],
            &[1, 8, 6, 6],
        ),
        layer(
            r,
            "depthwise-nn-u8",
            "QDQ uint8 depthwise Conv 3x3 (group 8), static constants: on NN",
            false,
            (
                "Conv",
                vec![
                    fixtures::ints("kernel_shape", &[3, 3]),
                    attr_int("group", 8),
                ],
            ),
            &[8, 1, 3, 3],
            &[1, 8, 8, 8],
            &[1, 8, 6, 6],
        ),
        layer(
            r,
            "gemm-nn-u8",
            "QDQ uint8 Gemm (transB = 1), static constants: on NN",
            false,
            ("Gemm", vec![attr_int("transB", 1)]),
            &[8, 16],
            &[1, 16],
            &[1, 8],
        ),
    ];
    let fp16 = model(
        "conv_nn_fp16",
        vec![node("Conv", &["x", "w", "b"], &["y"], conv().1)],
        vec![floats(r, "w", &[8, 4, 3, 3]), floats(r, "b", &[8])],
        &[("x", &[1, 4, 8, 8])],
        &[("y", &[1, 8, 6, 6])],
    );
    out.push((
        "conv-nn-fp16",
        "Conv 3x3 (float32 -> float16), static constants: on NN on 0x1000000e only",
        static_constants(&fp16),
    ));
    // Built last, so the models above keep their random constants. Its kernel size, channels
    // and a non-square image differ from the 3x3 layers', so the layer check over the capture
    // sets sees each geometry field of the NN command take two values (x and y apart).
    out.push(layer(
        r,
        "conv5-nn-u8",
        "QDQ uint8 Conv 5x5 on a 7x10 image, 6 kernels, static constants: on NN",
        false,
        ("Conv", vec![fixtures::ints("kernel_shape", &[5, 5])]),
        &[6, 4, 5, 5],
        &[1, 4, 10, 7],
        &[1, 6, 6, 3],
    ));
    // The 3x3 layer followed by a Relu and by a 2x2 max pooling, each of which the NN command
    // fuses (measured on 0x1000003b and 0x9f): the capture sets' `relu` and `pooling` change
    // with nothing else of the command's geometry.
    for (name, what, op, attributes, y) in [
        (
            "conv-relu-nn-u8",
            "QDQ uint8 Conv 3x3 then Relu, static constants: fused on NN",
            "Relu",
            vec![],
            [1, 8, 6, 6],
        ),
        (
            "conv-maxpool-nn-u8",
            "QDQ uint8 Conv 3x3 then MaxPool 2x2 stride 2, static constants: fused on NN",
            "MaxPool",
            vec![
                fixtures::ints("kernel_shape", &[2, 2]),
                fixtures::ints("strides", &[2, 2]),
            ],
            [1, 8, 3, 3],
        ),
    ] {
        let (_, _, base) = layer(
            r,
            name,
            what,
            false,
            conv(),
            &[8, 4, 3, 3],
            &[1, 4, 8, 8],
            &[1, 8, 6, 6],
        );
        out.push((name, what, followed_by(&base, op, attributes, &y)));
    }
    out
}

/// The geometry of one QDQ 8-bit convolution (`conv_u8`).
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    /// Output channels: kernels.
    pub channels: i64,
    /// Input channels (the channels again when depthwise).
    pub inputs: i64,
    /// Kernel width and height.
    pub kernel: i64,
    /// Input width and height.
    pub image: i64,
    /// Stride.
    pub stride: i64,
    /// One kernel per input channel.
    pub depthwise: bool,
    /// An activation after it (`Sigmoid`, `Tanh`), or none.
    pub activation: Option<&'static str>,
    /// int8 with zero points 0, else uint8 (the kernel's zero point 10).
    pub signed: bool,
}

/// One QDQ uint8 or int8 convolution of geometry `g` ("same" padding), random constants seeded by the
/// geometry, constants static: the vendor tests compile a set of them to prove how kernels
/// are dealt to cores whatever the channels, kernel and stride.
pub fn conv_u8(g: &Geometry) -> Vec<u8> {
    let seed = [g.channels, g.inputs, g.kernel, g.image, g.stride]
        .iter()
        .fold(
            u64::from(g.depthwise) | u64::from(g.signed) << 1,
            |a, &v| a.wrapping_mul(131) ^ v as u64,
        );
    let r = &mut Rng::new(seed);
    let zp = |u: u8| if g.signed { 0 } else { u };
    let (mut inits, mut nodes) = qdq("x", 0.05, zp(128), g.signed);
    let z = if g.depthwise { 1 } else { g.inputs };
    let dims = [g.channels, z, g.kernel, g.kernel];
    let (wi, wn) = quantized_const(r, "w", &dims, 0.01, zp(10), g.signed);
    inits.extend(wi);
    nodes.push(wn);
    let (b, bn) = int32_bias(r, g.channels as usize, 256, 0.0005);
    inits.extend(b);
    nodes.push(bn);
    let pad = g.kernel / 2;
    let mut attributes = vec![
        fixtures::ints("kernel_shape", &[g.kernel, g.kernel]),
        fixtures::ints("pads", &[pad; 4]),
        fixtures::ints("strides", &[g.stride, g.stride]),
    ];
    if g.depthwise {
        attributes.push(attr_int("group", g.inputs));
    }
    nodes.push(node("Conv", &["x_dq", "w_dq", "b_dq"], &["y"], attributes));
    let (o, on) = qdq("y", 0.5, zp(128), g.signed);
    inits.extend(o);
    nodes.extend(on);
    let side = (g.image + 2 * pad - g.kernel) / g.stride + 1;
    let out = [1, g.channels, side, side];
    let m = model(
        "conv_geometry",
        nodes,
        inits,
        &[("x", &[1, g.inputs, g.image, g.image])],
        &[("y_dq", &out)],
    );
    static_constants(&match g.activation {
        Some(op) => followed_by(&m, op, vec![], &out),
        None => m,
    })
}

/// The uint8 3x3 layer of `nn` followed by an activation the NN command applies through a
/// lookup table after its biases (operation `SP`, measured on 0x1000003b): Sigmoid and Tanh.
/// Not capture sets: the vendor tests compile them to read that table.
pub fn activations() -> Vec<(&'static str, Vec<u8>)> {
    let base = nn()
        .into_iter()
        .find(|m| m.0 == "conv-nn-u8")
        .expect("nn holds conv-nn-u8")
        .2;
    ["Sigmoid", "Tanh"]
        .into_iter()
        .map(|op| (op, followed_by(&base, op, vec![], &[1, 8, 6, 6])))
        .collect()
}

/// `layer` (a model of `nn`, output `y_dq`) with `op` applied to its output and quantized
/// again as the output was (`z` -> `z_dq`, of shape `out`).
fn followed_by(layer: &[u8], op: &str, attributes: Vec<AttributeProto>, out: &[i64]) -> Vec<u8> {
    let mut m = ModelProto::decode(layer).expect("a model just built decodes");
    let g = m.graph.get_or_insert_with(Default::default);
    let (inits, nodes) = qdq("z", 2.0, 5, false);
    g.node.push(node(op, &["y_dq"], &["z"], attributes));
    g.node.extend(nodes);
    g.initializer.extend(inits);
    g.output = vec![value("z_dq", out)];
    m.encode_to_vec()
}

/// `model` (ONNX bytes) asking for static constants (`plan::LIFETIME_KEY`).
fn static_constants(model: &[u8]) -> Vec<u8> {
    let mut m = ModelProto::decode(model).expect("a model just built decodes");
    m.metadata_props.push(StringStringEntryProto {
        key: s(super::plan::LIFETIME_KEY),
        value: s("static"),
    });
    m.encode_to_vec()
}

fn attr_float(name: &str, v: f32) -> AttributeProto {
    AttributeProto {
        name: s(name),
        f: Some(v),
        r#type: Some(attribute_type::FLOAT),
        ..Default::default()
    }
}

fn int64s(name: &str, v: &[i64]) -> TensorProto {
    tensor(
        name,
        data_type::INT64,
        &[v.len() as i64],
        v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    )
}

/// One operator of the lowering on a 1x4x8x8 float input (opset 14): the coverage models
/// `nbg onnx qualify` holds the lowering to (`vendor_hybrid` tests). Not part of `all`, whose
/// models are the committed serializer controls.
pub fn coverage() -> Vec<(&'static str, Vec<u8>)> {
    let mut rng = Rng::new(0xc0fe);
    let r = &mut rng;
    let x4: &[i64] = &[1, 4, 8, 8];
    let one = |name: &'static str,
               nodes: Vec<NodeProto>,
               inits: Vec<TensorProto>,
               out: &[i64]|
     -> (&'static str, Vec<u8>) {
        let mut m = fixtures::model(GraphProto {
            node: nodes,
            name: s(&name.replace('-', "_")),
            initializer: inits,
            input: vec![value("x", x4)],
            output: vec![value("y", out)],
            ..Default::default()
        });
        m.producer_version = s("vendor-models/1");
        m.opset_import[0].version = Some(14);
        (name, m.encode_to_vec())
    };
    vec![
        one(
            "grouped-conv",
            vec![node(
                "Conv",
                &["x", "w", "b"],
                &["y"],
                vec![attr_int("group", 2), fixtures::ints("pads", &[1, 1, 1, 1])],
            )],
            vec![floats(r, "w", &[6, 2, 3, 3]), floats(r, "b", &[6])],
            &[1, 6, 8, 8],
        ),
        one(
            "depthwise-conv",
            vec![node(
                "Conv",
                &["x", "w", "b"],
                &["y"],
                vec![attr_int("group", 4), fixtures::ints("pads", &[1, 1, 1, 1])],
            )],
            vec![floats(r, "w", &[8, 1, 3, 3]), floats(r, "b", &[8])],
            &[1, 8, 8, 8],
        ),
        one(
            "batchnorm-prelu",
            vec![
                node(
                    "BatchNormalization",
                    &["x", "g", "b", "m", "v"],
                    &["t"],
                    vec![],
                ),
                node("PRelu", &["t", "sl"], &["y"], vec![]),
            ],
            vec![
                floats(r, "g", &[4]),
                floats(r, "b", &[4]),
                floats(r, "m", &[4]),
                fixtures::float_tensor("v", &[4], &[0.5, 1.0, 1.5, 2.0]),
                floats(r, "sl", &[4, 1, 1]),
            ],
            x4,
        ),
        one(
            "clip-relu6",
            vec![node("Clip", &["x", "lo", "hi"], &["y"], vec![])],
            vec![scalar_f32("lo", 0.0), scalar_f32("hi", 0.5)],
            x4,
        ),
        one(
            "pad",
            vec![node("Pad", &["x", "p", "c"], &["y"], vec![])],
            vec![int64s("p", &[0, 0, 1, 2, 0, 0, 2, 1]), scalar_f32("c", 0.5)],
            &[1, 4, 11, 11],
        ),
        one(
            "resize-nearest",
            vec![node("Resize", &["x", "", "sc"], &["y"], vec![])],
            vec![fixtures::float_tensor("sc", &[4], &[1.0, 1.0, 2.0, 2.0])],
            &[1, 4, 16, 16],
        ),
        one(
            "hard-sigmoid",
            vec![node(
                "HardSigmoid",
                &["x"],
                &["y"],
                vec![attr_float("alpha", 0.25), attr_float("beta", 0.4)],
            )],
            vec![],
            x4,
        ),
        one(
            "hard-swish",
            vec![node("HardSwish", &["x"], &["y"], vec![])],
            vec![],
            x4,
        ),
        one(
            "transpose",
            vec![node(
                "Transpose",
                &["x"],
                &["y"],
                vec![fixtures::ints("perm", &[0, 2, 3, 1])],
            )],
            vec![],
            &[1, 8, 8, 4],
        ),
        one(
            "slice",
            vec![node(
                "Slice",
                &["x", "st", "en", "ax", "sp"],
                &["y"],
                vec![],
            )],
            vec![
                int64s("st", &[1, 2]),
                int64s("en", &[7, 8]),
                int64s("ax", &[2, 3]),
                int64s("sp", &[1, 2]),
            ],
            &[1, 4, 6, 3],
        ),
    ]
}
