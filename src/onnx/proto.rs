//! ONNX protobuf messages, written for this project from the public `onnx.proto` (proto2)
//! field numbers. Proto2 semantics are kept exactly (optional scalars keep presence, packed
//! only where the schema says so) so that re-encoding a decoded model reproduces its bytes:
//! any field this schema does not know shows up as a difference and is refused, never dropped.

use prost::{Message, Oneof};

/// The top-level message of an `.onnx` file: the graph, its operator set imports and
/// metadata.
#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    /// The ONNX IR version the model is written against (`Version` enum of onnx.proto).
    #[prost(int64, optional, tag = "1")]
    pub ir_version: Option<i64>,
    /// The tool that wrote the model (`pytorch`, `onnx.helper`, ...).
    #[prost(string, optional, tag = "2")]
    pub producer_name: Option<String>,
    /// The producing tool's version.
    #[prost(string, optional, tag = "3")]
    pub producer_version: Option<String>,
    /// Reverse-DNS namespace of the model (`com.example`).
    #[prost(string, optional, tag = "4")]
    pub domain: Option<String>,
    /// The model's own version number.
    #[prost(int64, optional, tag = "5")]
    pub model_version: Option<i64>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "6")]
    pub doc_string: Option<String>,
    /// The computation; admission refuses a model without one.
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    /// The operator sets (domain and version) the graph's nodes resolve against.
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
    /// Free-form named metadata.
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
    /// Training graphs; admission refuses a model carrying any.
    #[prost(message, repeated, tag = "20")]
    pub training_info: Vec<TrainingInfoProto>,
    /// Model-local functions; admission refuses a model carrying any.
    #[prost(message, repeated, tag = "25")]
    pub functions: Vec<FunctionProto>,
}

/// One operator set import: a domain at a version.
#[derive(Clone, PartialEq, Message)]
pub struct OperatorSetIdProto {
    /// The operator set's domain; empty or absent is the default ONNX domain (`ai.onnx`).
    #[prost(string, optional, tag = "1")]
    pub domain: Option<String>,
    /// The operator set version imported.
    #[prost(int64, optional, tag = "2")]
    pub version: Option<i64>,
}

/// One string key-value pair (metadata, external data locations, bindings).
#[derive(Clone, PartialEq, Message)]
pub struct StringStringEntryProto {
    /// The key.
    #[prost(string, optional, tag = "1")]
    pub key: Option<String>,
    /// The value.
    #[prost(string, optional, tag = "2")]
    pub value: Option<String>,
}

/// Training information; known so admission can refuse it by name.
#[derive(Clone, PartialEq, Message)]
pub struct TrainingInfoProto {
    /// The graph that initializes the training state.
    #[prost(message, optional, tag = "1")]
    pub initialization: Option<GraphProto>,
    /// The graph of one training step.
    #[prost(message, optional, tag = "2")]
    pub algorithm: Option<GraphProto>,
    /// Initializers the initialization graph's outputs are assigned to.
    #[prost(message, repeated, tag = "3")]
    pub initialization_binding: Vec<StringStringEntryProto>,
    /// Initializers the training step's outputs are assigned to.
    #[prost(message, repeated, tag = "4")]
    pub update_binding: Vec<StringStringEntryProto>,
}

/// Model-local functions are refused by admission; the message is known so they are named.
#[derive(Clone, PartialEq, Message)]
pub struct FunctionProto {
    /// The function's name (the `op_type` its call sites use).
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// Formal input names.
    #[prost(string, repeated, tag = "4")]
    pub input: Vec<String>,
    /// Formal output names.
    #[prost(string, repeated, tag = "5")]
    pub output: Vec<String>,
    /// Names of the attributes it takes (no default values).
    #[prost(string, repeated, tag = "6")]
    pub attribute: Vec<String>,
    /// The function body.
    #[prost(message, repeated, tag = "7")]
    pub node: Vec<NodeProto>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "8")]
    pub doc_string: Option<String>,
    /// The operator sets its body resolves against.
    #[prost(message, repeated, tag = "9")]
    pub opset_import: Vec<OperatorSetIdProto>,
    /// The domain its call sites name.
    #[prost(string, optional, tag = "10")]
    pub domain: Option<String>,
    /// Attributes it takes, with default values.
    #[prost(message, repeated, tag = "11")]
    pub attribute_proto: Vec<AttributeProto>,
    /// Type information of values inside the body.
    #[prost(message, repeated, tag = "12")]
    pub value_info: Vec<ValueInfoProto>,
    /// Distinguishes overloads of one name and domain.
    #[prost(string, optional, tag = "13")]
    pub overload: Option<String>,
    /// Free-form named metadata.
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// A graph: nodes in topological order, its inputs, outputs and constant initializers.
#[derive(Clone, PartialEq, Message)]
pub struct GraphProto {
    /// The nodes, in topological order.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    /// The graph's name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Constant tensors, each naming the value it defines.
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "10")]
    pub doc_string: Option<String>,
    /// The graph inputs (initializers may be listed too, as optional overrides).
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    /// The graph outputs.
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
    /// Type and shape information of intermediate values.
    #[prost(message, repeated, tag = "13")]
    pub value_info: Vec<ValueInfoProto>,
    /// Quantization parameters of tensors, by tensor name.
    #[prost(message, repeated, tag = "14")]
    pub quantization_annotation: Vec<TensorAnnotation>,
    /// Constant sparse tensors.
    #[prost(message, repeated, tag = "15")]
    pub sparse_initializer: Vec<SparseTensorProto>,
    /// Free-form named metadata.
    #[prost(message, repeated, tag = "16")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// Quantization parameters attached to one tensor of a graph.
#[derive(Clone, PartialEq, Message)]
pub struct TensorAnnotation {
    /// The annotated tensor.
    #[prost(string, optional, tag = "1")]
    pub tensor_name: Option<String>,
    /// Parameter kinds (`SCALE_TENSOR`, `ZERO_POINT_TENSOR`) mapped to the tensors
    /// holding them.
    #[prost(message, repeated, tag = "2")]
    pub quant_parameter_tensor_names: Vec<StringStringEntryProto>,
}

/// One operator call in a graph.
#[derive(Clone, PartialEq, Message)]
pub struct NodeProto {
    /// Names of the values it reads; an empty name is an omitted optional input.
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// Names of the values it defines; an empty name is an omitted optional output.
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    /// The node's name, for diagnostics (optional).
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
    /// The operator (`Conv`, `Relu`, ...).
    #[prost(string, optional, tag = "4")]
    pub op_type: Option<String>,
    /// The operator's attributes.
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "6")]
    pub doc_string: Option<String>,
    /// The operator's domain; empty or absent is the default ONNX domain.
    #[prost(string, optional, tag = "7")]
    pub domain: Option<String>,
    /// Which overload of a model-local function it calls.
    #[prost(string, optional, tag = "8")]
    pub overload: Option<String>,
    /// Free-form named metadata.
    #[prost(message, repeated, tag = "9")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// `AttributeProto.AttributeType`.
pub mod attribute_type {
    /// No type given.
    pub const UNDEFINED: i32 = 0;
    /// `f` holds the value.
    pub const FLOAT: i32 = 1;
    /// `i` holds the value.
    pub const INT: i32 = 2;
    /// `s` holds the value.
    pub const STRING: i32 = 3;
    /// `t` holds the value.
    pub const TENSOR: i32 = 4;
    /// `g` holds the value.
    pub const GRAPH: i32 = 5;
    /// `floats` holds the value.
    pub const FLOATS: i32 = 6;
    /// `ints` holds the value.
    pub const INTS: i32 = 7;
    /// `strings` holds the value.
    pub const STRINGS: i32 = 8;
    /// `tensors` holds the value.
    pub const TENSORS: i32 = 9;
    /// `graphs` holds the value.
    pub const GRAPHS: i32 = 10;
    /// `sparse_tensor` holds the value.
    pub const SPARSE_TENSOR: i32 = 11;
    /// `sparse_tensors` holds the value.
    pub const SPARSE_TENSORS: i32 = 12;
    /// `tp` holds the value.
    pub const TYPE_PROTO: i32 = 13;
    /// `type_protos` holds the value.
    pub const TYPE_PROTOS: i32 = 14;
}

/// One named attribute of a node (or a function's default); `type` says which value field
/// is meant.
#[derive(Clone, PartialEq, Message)]
pub struct AttributeProto {
    /// The attribute's name.
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// The value of a `FLOAT` attribute.
    #[prost(float, optional, tag = "2")]
    pub f: Option<f32>,
    /// The value of an `INT` attribute.
    #[prost(int64, optional, tag = "3")]
    pub i: Option<i64>,
    /// The value of a `STRING` attribute (bytes, usually UTF-8).
    #[prost(bytes = "vec", optional, tag = "4")]
    pub s: Option<Vec<u8>>,
    /// The value of a `TENSOR` attribute.
    #[prost(message, optional, tag = "5")]
    pub t: Option<TensorProto>,
    /// The value of a `GRAPH` attribute (a subgraph: `If`, `Loop`, `Scan` bodies).
    #[prost(message, optional, tag = "6")]
    pub g: Option<GraphProto>,
    /// The value of a `FLOATS` attribute.
    #[prost(float, repeated, packed = "false", tag = "7")]
    pub floats: Vec<f32>,
    /// The value of an `INTS` attribute.
    #[prost(int64, repeated, packed = "false", tag = "8")]
    pub ints: Vec<i64>,
    /// The value of a `STRINGS` attribute.
    #[prost(bytes = "vec", repeated, tag = "9")]
    pub strings: Vec<Vec<u8>>,
    /// The value of a `TENSORS` attribute.
    #[prost(message, repeated, tag = "10")]
    pub tensors: Vec<TensorProto>,
    /// The value of a `GRAPHS` attribute.
    #[prost(message, repeated, tag = "11")]
    pub graphs: Vec<GraphProto>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "13")]
    pub doc_string: Option<String>,
    /// The value of a `TYPE_PROTO` attribute.
    #[prost(message, optional, tag = "14")]
    pub tp: Option<TypeProto>,
    /// The value of a `TYPE_PROTOS` attribute.
    #[prost(message, repeated, tag = "15")]
    pub type_protos: Vec<TypeProto>,
    /// Which value field holds the attribute (an [`attribute_type`] code).
    #[prost(int32, optional, tag = "20")]
    pub r#type: Option<i32>,
    /// Inside a function body: the function attribute this one refers to.
    #[prost(string, optional, tag = "21")]
    pub ref_attr_name: Option<String>,
    /// The value of a `SPARSE_TENSOR` attribute.
    #[prost(message, optional, tag = "22")]
    pub sparse_tensor: Option<SparseTensorProto>,
    /// The value of a `SPARSE_TENSORS` attribute.
    #[prost(message, repeated, tag = "23")]
    pub sparse_tensors: Vec<SparseTensorProto>,
}

/// A named value with its type: a graph input, output or intermediate.
#[derive(Clone, PartialEq, Message)]
pub struct ValueInfoProto {
    /// The value's name.
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// Its type (tensor element type and shape, or another kind).
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "3")]
    pub doc_string: Option<String>,
    /// Free-form named metadata.
    #[prost(message, repeated, tag = "4")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// `TensorProto.DataType` values the audit names.
pub mod data_type {
    /// Each element type's name, indexed by its code.
    pub const NAMES: [&str; 24] = [
        "UNDEFINED",
        "FLOAT",
        "UINT8",
        "INT8",
        "UINT16",
        "INT16",
        "INT32",
        "INT64",
        "STRING",
        "BOOL",
        "FLOAT16",
        "DOUBLE",
        "UINT32",
        "UINT64",
        "COMPLEX64",
        "COMPLEX128",
        "BFLOAT16",
        "FLOAT8E4M3FN",
        "FLOAT8E4M3FNUZ",
        "FLOAT8E5M2",
        "FLOAT8E5M2FNUZ",
        "UINT4",
        "INT4",
        "FLOAT4E2M1",
    ];
    /// 32-bit IEEE float.
    pub const FLOAT: i32 = 1;
    /// 8-bit unsigned integer.
    pub const UINT8: i32 = 2;
    /// 8-bit signed integer.
    pub const INT8: i32 = 3;
    /// 16-bit signed integer.
    pub const INT16: i32 = 5;
    /// 32-bit signed integer.
    pub const INT32: i32 = 6;
    /// 64-bit signed integer.
    pub const INT64: i32 = 7;
    /// IEEE half-precision float.
    pub const FLOAT16: i32 = 10;
    /// bfloat16.
    pub const BFLOAT16: i32 = 16;

    /// The element type's onnx.proto name (`FLOAT`, `INT64`, ...), when the code is known.
    pub fn name(t: i32) -> Option<&'static str> {
        usize::try_from(t).ok().and_then(|i| NAMES.get(i).copied())
    }

    /// Bits per element, where fixed.
    pub fn bits(t: i32) -> Option<u64> {
        Some(match t {
            1 | 6 | 12 => 32,
            2 | 3 | 9 | 17..=20 => 8,
            4 | 5 | 10 | 16 => 16,
            7 | 11 | 13 | 14 => 64,
            15 => 128,
            21..=23 => 4,
            _ => return None,
        })
    }
}

/// A tensor value: a constant initializer or an attribute's tensor. Its elements are in
/// `raw_data` (little-endian) or in the typed field its `data_type` selects.
#[derive(Clone, PartialEq, Message)]
pub struct TensorProto {
    /// The shape, outermost dimension first.
    #[prost(int64, repeated, packed = "false", tag = "1")]
    pub dims: Vec<i64>,
    /// The element type (a [`data_type`] code).
    #[prost(int32, optional, tag = "2")]
    pub data_type: Option<i32>,
    /// For a tensor split across several messages: the part this one holds.
    #[prost(message, optional, tag = "3")]
    pub segment: Option<Segment>,
    /// Elements of FLOAT and COMPLEX64 tensors (real and imaginary parts interleaved).
    #[prost(float, repeated, packed = "true", tag = "4")]
    pub float_data: Vec<f32>,
    /// Elements of INT32, INT16, INT8, UINT16, UINT8, BOOL and the 4-bit types, and the bit
    /// patterns of FLOAT16, BFLOAT16 and the 8-bit floats.
    #[prost(int32, repeated, packed = "true", tag = "5")]
    pub int32_data: Vec<i32>,
    /// Elements of STRING tensors.
    #[prost(bytes = "vec", repeated, tag = "6")]
    pub string_data: Vec<Vec<u8>>,
    /// Elements of INT64 tensors.
    #[prost(int64, repeated, packed = "true", tag = "7")]
    pub int64_data: Vec<i64>,
    /// The value the tensor defines (initializers) or a label.
    #[prost(string, optional, tag = "8")]
    pub name: Option<String>,
    /// All elements as little-endian bytes, instead of a typed field (not for strings).
    #[prost(bytes = "vec", optional, tag = "9")]
    pub raw_data: Option<Vec<u8>>,
    /// Elements of DOUBLE and COMPLEX128 tensors.
    #[prost(double, repeated, packed = "true", tag = "10")]
    pub double_data: Vec<f64>,
    /// Elements of UINT32 and UINT64 tensors.
    #[prost(uint64, repeated, packed = "true", tag = "11")]
    pub uint64_data: Vec<u64>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "12")]
    pub doc_string: Option<String>,
    /// Where external data lives (`location`, `offset`, `length`, ...); admission refuses
    /// external data.
    #[prost(message, repeated, tag = "13")]
    pub external_data: Vec<StringStringEntryProto>,
    /// 0 DEFAULT, 1 EXTERNAL.
    #[prost(int32, optional, tag = "14")]
    pub data_location: Option<i32>,
    /// Free-form named metadata.
    #[prost(message, repeated, tag = "16")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// The element range of a tensor split across several messages.
#[derive(Clone, PartialEq, Message)]
pub struct Segment {
    /// First element index of this part.
    #[prost(int64, optional, tag = "1")]
    pub begin: Option<i64>,
    /// Element index one past this part's last.
    #[prost(int64, optional, tag = "2")]
    pub end: Option<i64>,
}

/// A sparse tensor: the non-default values and where they are.
#[derive(Clone, PartialEq, Message)]
pub struct SparseTensorProto {
    /// The non-default values, a 1-D tensor of NNZ elements.
    #[prost(message, optional, tag = "1")]
    pub values: Option<TensorProto>,
    /// Their positions: an INT64 tensor of shape `[NNZ]` (linear) or `[NNZ, rank]`.
    #[prost(message, optional, tag = "2")]
    pub indices: Option<TensorProto>,
    /// The shape of the dense tensor it stands for.
    #[prost(int64, repeated, packed = "false", tag = "3")]
    pub dims: Vec<i64>,
}

/// A tensor shape: one entry per dimension, outermost first.
#[derive(Clone, PartialEq, Message)]
pub struct TensorShapeProto {
    /// The dimensions.
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

/// One dimension: a fixed value, a symbol, or unknown.
#[derive(Clone, PartialEq, Message)]
pub struct Dimension {
    /// The fixed value or the symbol; absent when unknown.
    #[prost(oneof = "DimensionValue", tags = "1, 2")]
    pub value: Option<DimensionValue>,
    /// Standard meaning of the dimension (`DATA_BATCH`, `DATA_CHANNEL`, ...).
    #[prost(string, optional, tag = "3")]
    pub denotation: Option<String>,
}

impl Dimension {
    /// The fixed size, when there is one. A negative `dim_value` is a dynamic dimension, as
    /// ONNX Runtime reads it (it checks only non-negative sizes against an input): Paddle2ONNX
    /// writes -1 for a dynamic batch or width.
    pub fn fixed(&self) -> Option<i64> {
        match self.value {
            Some(DimensionValue::DimValue(n)) if n >= 0 => Some(n),
            _ => None,
        }
    }
}

/// A dimension's fixed value or its symbol.
#[derive(Clone, PartialEq, Oneof)]
pub enum DimensionValue {
    /// A fixed size.
    #[prost(int64, tag = "1")]
    DimValue(i64),
    /// A symbolic size: dimensions with the same symbol are equal.
    #[prost(string, tag = "2")]
    DimParam(String),
}

/// The type of a value: a tensor, a sparse tensor, a sequence, a map, an optional or an
/// opaque type.
#[derive(Clone, PartialEq, Message)]
pub struct TypeProto {
    /// Which kind of type, with its details.
    #[prost(oneof = "TypeValue", tags = "1, 4, 5, 7, 8, 9")]
    pub value: Option<TypeValue>,
    /// Standard meaning of the value (`IMAGE`, `AUDIO`, `TEXT`, ...).
    #[prost(string, optional, tag = "6")]
    pub denotation: Option<String>,
}

/// The kinds of `TypeProto.value`.
#[derive(Clone, PartialEq, Oneof)]
pub enum TypeValue {
    /// A dense tensor.
    #[prost(message, tag = "1")]
    TensorType(TensorTypeProto),
    /// A sequence of values of one type.
    #[prost(message, tag = "4")]
    SequenceType(Box<SequenceTypeProto>),
    /// A map from a scalar key type to a value type.
    #[prost(message, tag = "5")]
    MapType(Box<MapTypeProto>),
    /// A type known only to a domain.
    #[prost(message, tag = "7")]
    OpaqueType(OpaqueTypeProto),
    /// A sparse tensor.
    #[prost(message, tag = "8")]
    SparseTensorType(TensorTypeProto),
    /// A value that may be absent.
    #[prost(message, tag = "9")]
    OptionalType(Box<SequenceTypeProto>),
}

/// A (dense or sparse) tensor type: element type and shape.
#[derive(Clone, PartialEq, Message)]
pub struct TensorTypeProto {
    /// The element type (a [`data_type`] code).
    #[prost(int32, optional, tag = "1")]
    pub elem_type: Option<i32>,
    /// The shape; absent when even the rank is unknown.
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

/// `Sequence` and `Optional` share one layout: an element type at tag 1.
#[derive(Clone, PartialEq, Message)]
pub struct SequenceTypeProto {
    /// The element type (of the sequence, or of the optional's value).
    #[prost(message, optional, boxed, tag = "1")]
    pub elem_type: Option<Box<TypeProto>>,
}

/// A map type.
#[derive(Clone, PartialEq, Message)]
pub struct MapTypeProto {
    /// The key's element type (a [`data_type`] code: an integer or STRING).
    #[prost(int32, optional, tag = "1")]
    pub key_type: Option<i32>,
    /// The value type.
    #[prost(message, optional, boxed, tag = "2")]
    pub value_type: Option<Box<TypeProto>>,
}

/// An opaque type, named by a domain.
#[derive(Clone, PartialEq, Message)]
pub struct OpaqueTypeProto {
    /// The domain defining the type.
    #[prost(string, optional, tag = "1")]
    pub domain: Option<String>,
    /// The type's name within the domain.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}
