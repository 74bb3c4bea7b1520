//! What the driver child builds: an OpenVX graph as plain data, made from an ONNX model in the
//! parent (`simulator::lower`) and replayed call by call in the child (`simulator::driver`), so the
//! translation is testable without the driver and the child only does what the plan says.

use serde::{Deserialize, Serialize};

/// An element type the plan uses (OpenVX `vx_type_e`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Elem {
    /// IEEE half.
    Float16,
    /// IEEE single (biases of float graphs).
    Float32,
    /// Unsigned 8-bit (affine quantized).
    Uint8,
    /// Signed 8-bit (affine quantized).
    Int8,
    /// Signed 32-bit (quantized biases, reshape dimensions).
    Int32,
}

impl Elem {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Elem::Float16 => 2,
            Elem::Uint8 | Elem::Int8 => 1,
            Elem::Float32 | Elem::Int32 => 4,
        }
    }

    /// The `vx_type_e` value.
    pub fn vx(self) -> i32 {
        use super::ffi::ty;
        match self {
            Elem::Float16 => ty::FLOAT16,
            Elem::Float32 => ty::FLOAT32,
            Elem::Uint8 => ty::UINT8,
            Elem::Int8 => ty::INT8,
            Elem::Int32 => ty::INT32,
        }
    }
}

/// Per-tensor affine quantization: real = scale x (q - zero_point).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Affine {
    /// The scale.
    pub scale: f32,
    /// The zero point.
    pub zero_point: i32,
}

/// What a tensor is to the graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// A graph input, in `Plan::inputs` order.
    Input,
    /// A graph output, in `Plan::outputs` order.
    Output,
    /// Constant data (weights, biases, reshape dimensions), little-endian elements.
    Constant(#[serde(with = "hex_bytes")] Vec<u8>),
    /// An intermediate value (a virtual tensor).
    Virtual,
}

/// One tensor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tensor {
    /// The ONNX value it stands for.
    pub name: String,
    /// Dimensions, innermost first (ONNX dimensions reversed).
    pub dims: Vec<u32>,
    /// Element type.
    pub elem: Elem,
    /// Quantization, for 8-bit and quantized-bias tensors.
    pub quant: Option<Affine>,
    /// Input, output, constant or virtual.
    pub role: Role,
}

impl Tensor {
    /// Elements it holds.
    pub fn elements(&self) -> u64 {
        self.dims.iter().map(|&d| u64::from(d)).product()
    }
}

/// Pooling kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolKind {
    /// Maximum.
    Max,
    /// Average.
    Avg,
}

/// Activation function.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Activation {
    /// max(0, x).
    Relu,
    /// 1 / (1 + e^-x).
    Logistic,
    /// tanh(x).
    Tanh,
    /// min(upper, max(0, x)) (`VX_NN_ACTIVATION_BRELU`): Clip(0, upper), Relu6.
    BoundedRelu {
        /// The upper bound.
        upper: f32,
    },
    /// x for x > 0, alpha x otherwise (`VX_NN_ACTIVATION_LEAKYRELU`).
    LeakyRelu {
        /// The slope below zero.
        alpha: f32,
    },
    /// x min(1, max(0, x / 6 + 1 / 2)) (`VX_NN_ACTIVATION_HSWISH`).
    HardSwish,
}

/// One node; tensor operands are indices into `Plan::tensors`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Node {
    /// `vxConvolutionLayer` with the ext2 parameters.
    Conv {
        /// Input tensor.
        input: usize,
        /// Weights `[kW, kH, C/groups, OC]`.
        weights: usize,
        /// Bias `[OC]`.
        bias: Option<usize>,
        /// Left, right, top, bottom.
        pads: [u32; 4],
        /// x, y.
        strides: [u32; 2],
        /// Zeros inserted between kernel taps, x and y (ONNX dilation - 1).
        dilation: [u32; 2],
        /// Depthwise multiplier (0 unless depthwise).
        depth_multiplier: u32,
        /// Output tensor.
        output: usize,
    },
    /// `vxFullyConnectedLayer`.
    FullyConnected {
        /// Input tensor.
        input: usize,
        /// Weights `[K, N]` (innermost K).
        weights: usize,
        /// Bias `[N]`.
        bias: Option<usize>,
        /// Output tensor.
        output: usize,
    },
    /// `vxPoolingLayer2` with the extended parameters.
    Pool {
        /// Max or average.
        kind: PoolKind,
        /// Input tensor.
        input: usize,
        /// Window x, y.
        size: [u32; 2],
        /// Left, right, top, bottom.
        pads: [u32; 4],
        /// x, y.
        strides: [u32; 2],
        /// Output tensor.
        output: usize,
    },
    /// `vxActivationLayer`.
    Activation {
        /// The function.
        function: Activation,
        /// Input tensor.
        input: usize,
        /// Output tensor.
        output: usize,
    },
    /// `vxSoftmaxLayer` (over the innermost dimension).
    Softmax {
        /// Input tensor.
        input: usize,
        /// Output tensor.
        output: usize,
    },
    /// `vxTensorAddNode` (saturating).
    Add {
        /// First operand.
        a: usize,
        /// Second operand.
        b: usize,
        /// Output tensor.
        output: usize,
    },
    /// `vxTensorMultiplyNode` (scale 1, saturating, round to nearest even).
    Mul {
        /// First operand.
        a: usize,
        /// Second operand.
        b: usize,
        /// Output tensor.
        output: usize,
    },
    /// `vxConcatIndefiniteLayer`.
    Concat {
        /// The operands in order.
        inputs: Vec<usize>,
        /// The axis, innermost first.
        axis: u32,
        /// Output tensor.
        output: usize,
    },
    /// `vxTensorPermuteNode`: output dimension i is input dimension `perm[i]` (innermost
    /// first).
    Permute {
        /// Input tensor.
        input: usize,
        /// The permutation, innermost first.
        perm: Vec<u32>,
        /// Output tensor.
        output: usize,
    },
    /// `vxPReluLayer`: x for x > 0, alpha[c] x otherwise, per channel.
    PRelu {
        /// Input tensor.
        input: usize,
        /// The per-channel slopes, one dimension.
        alpha: usize,
        /// Output tensor.
        output: usize,
    },
    /// `vxBatchNormalizationLayer`: gamma (x - mean) / sqrt(variance + eps) + beta, per
    /// channel.
    BatchNorm {
        /// Input tensor.
        input: usize,
        /// Epsilon.
        eps: f32,
        /// Means, one dimension.
        mean: usize,
        /// Variances.
        variance: usize,
        /// Scales.
        gamma: usize,
        /// Offsets.
        beta: usize,
        /// Output tensor.
        output: usize,
    },
    /// `vxTensorPadNode` with a constant: `front` and `back` elements per dimension
    /// (innermost first).
    Pad {
        /// Input tensor.
        input: usize,
        /// Elements added before, per dimension.
        front: Vec<i32>,
        /// Elements added after, per dimension.
        back: Vec<i32>,
        /// The value added.
        value: f32,
        /// Output tensor.
        output: usize,
    },
    /// `vxTensorStrideSliceNode`: per dimension (innermost first) `begin..end` by `stride`.
    Slice {
        /// Input tensor.
        input: usize,
        /// An INT32 constant of the begins.
        begin: usize,
        /// An INT32 constant of the ends.
        end: usize,
        /// An INT32 constant of the strides.
        stride: usize,
        /// Output tensor.
        output: usize,
    },
    /// `vxTensorScaleNode` with nearest-neighbour interpolation.
    ResizeNearest {
        /// Input tensor.
        input: usize,
        /// Output tensor.
        output: usize,
    },
    /// `vxTensorReshapeNode`.
    Reshape {
        /// Input tensor.
        input: usize,
        /// An INT32 constant holding the output dimensions.
        shape: usize,
        /// Output tensor.
        output: usize,
    },
}

/// A whole graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Every tensor.
    pub tensors: Vec<Tensor>,
    /// Nodes in execution order.
    pub nodes: Vec<Node>,
    /// The graph inputs (tensor indices), in the model's order.
    pub inputs: Vec<usize>,
    /// The graph outputs, in the model's order.
    pub outputs: Vec<usize>,
    /// The lifetime the driver is told the constant tensors have.
    #[serde(default)]
    pub constants: Lifetime,
}

/// The metadata key (`ModelProto.metadata_props`) by which a model asks for static constants.
pub const LIFETIME_KEY: &str = "nbg-lab.constant-lifetime";

/// How long a constant tensor lives, as the driver is told (`VX_TENSOR_LIFETIME`, a Vivante
/// extension in the wheel's public `vx_types.h` and `vx_khr_nn.h`). The driver's graph
/// optimizer moves a convolution or fully connected layer onto the NN engine only when its
/// weights and bias are static (measured: a uint8 3x3 conv on 0x1000003b runs on the shader
/// without it, on NN with it); ACUITY's generated code marks its weights so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lifetime {
    /// Left as the driver creates it (the lowering's default: what every committed control
    /// was compiled with).
    #[default]
    Unset,
    /// `VX_TENSOR_LIFE_TIME_STATIC`: asked for by `LIFETIME_KEY` = `static`.
    Static,
}

/// Constant bytes as lowercase hex in the plan's JSON (the plan crosses to the child on stdin).
mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::digest::hex(b))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = text.as_bytes();
        if bytes.len() % 2 != 0 {
            return Err(serde::de::Error::custom("odd hex length"));
        }
        let nibble = |c: u8| (c as char).to_digit(16).map(|v| v as u8);
        bytes
            .chunks_exact(2)
            .map(|p| match (nibble(p[0]), nibble(p[1])) {
                (Some(h), Some(l)) => Ok(h << 4 | l),
                _ => Err(serde::de::Error::custom("not hex")),
            })
            .collect()
    }
}
