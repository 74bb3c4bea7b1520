//! The few OpenVX 1.3 entry points, structures and values the driver child calls, declared from
//! the public Khronos OpenVX 1.3 and neural-network extension specifications and the Vivante
//! extension headers the SDK ships (facts: signatures, layouts, enum values), and loaded from
//! `libOpenVX.so` at run time with `libloading`. Only the driver child (`simulator::driver`) uses
//! them; layouts were checked with `offsetof`/`sizeof` against the SDK's headers (the notebook).

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// Every OpenVX object handle is an opaque pointer.
pub type Ref = *mut c_void;
/// `vx_status` / `vx_enum`.
pub type Status = i32;

/// `VX_SUCCESS`.
pub const SUCCESS: Status = 0;

/// `vx_type_e` values used here.
pub mod ty {
    /// `VX_TYPE_INT8`.
    pub const INT8: i32 = 0x002;
    /// `VX_TYPE_UINT8`.
    pub const UINT8: i32 = 0x003;
    /// `VX_TYPE_INT16`.
    pub const INT16: i32 = 0x004;
    /// `VX_TYPE_UINT16`.
    pub const UINT16: i32 = 0x005;
    /// `VX_TYPE_INT32`.
    pub const INT32: i32 = 0x006;
    /// `VX_TYPE_FLOAT32`.
    pub const FLOAT32: i32 = 0x00a;
    /// `VX_TYPE_UINT32`.
    pub const UINT32: i32 = 0x007;
    /// `VX_TYPE_FLOAT16`.
    pub const FLOAT16: i32 = 0x00f;
    /// `VX_TYPE_BFLOAT16` (Vivante).
    pub const BFLOAT16: i32 = 0x81a;
}

/// `vx_quantized_format_e`.
pub mod quant {
    /// No quantization.
    pub const NONE: i32 = 0;
    /// Dynamic fixed point.
    pub const DYNAMIC_FIXED_POINT: i32 = 1;
    /// Affine (scale, zero point) per tensor.
    pub const AFFINE_SCALE: i32 = 2;
}

/// `VX_CONVERT_POLICY_SATURATE`.
pub const CONVERT_POLICY_SATURATE: i32 = 0xa001;
/// `VX_ROUND_POLICY_TO_NEAREST_EVEN`.
pub const ROUND_POLICY_TO_NEAREST_EVEN: i32 = 0x1_2002;
/// `VX_NN_DS_SIZE_ROUNDING_FLOOR`.
pub const DS_SIZE_ROUNDING_FLOOR: i32 = 0x1_a000;
/// `VX_NN_POOLING_MAX`.
pub const POOLING_MAX: i32 = 0x1_b000;
/// `VX_NN_POOLING_AVG`.
pub const POOLING_AVG: i32 = 0x1_b001;
/// `VX_NN_ACTIVATION_LOGISTIC`.
pub const ACTIVATION_LOGISTIC: i32 = 0x1_d000;
/// `VX_NN_ACTIVATION_HYPERBOLIC_TAN`.
pub const ACTIVATION_HYPERBOLIC_TAN: i32 = 0x1_d001;
/// `VX_NN_ACTIVATION_RELU`.
pub const ACTIVATION_RELU: i32 = 0x1_d002;
/// `VX_READ_ONLY`.
pub const READ_ONLY: i32 = 0x1_1001;
/// `VX_NN_ACTIVATION_BRELU`: min(a, max(0, x)).
pub const ACTIVATION_BRELU: i32 = 0x1_d003;
/// `VX_NN_ACTIVATION_LEAKYRELU` (Vivante): x > 0 ? x : a x.
pub const ACTIVATION_LEAKYRELU: i32 = 0x71_d000;
/// `VX_NN_ACTIVATION_HSWISH` (Vivante).
pub const ACTIVATION_HSWISH: i32 = 0x71_d006;
/// `VX_PAD_CONSTANT` (Vivante, `vx_pad_mode_e`).
pub const PAD_CONSTANT: i32 = 0x70_c000;
/// `VX_INTERPOLATION_NEAREST_NEIGHBOR`.
pub const INTERPOLATION_NEAREST_NEIGHBOR: i32 = 0x4000;
/// `VX_WRITE_ONLY`.
pub const WRITE_ONLY: i32 = 0x1_1002;
/// `VX_MEMORY_TYPE_HOST`.
pub const MEMORY_TYPE_HOST: i32 = 0xe001;
/// `VX_INPUT`.
pub const INPUT: i32 = 0;
/// `VX_OUTPUT`.
pub const OUTPUT: i32 = 1;

/// `VX_TENSOR_LIFE_TIME_STATIC` (`vx_tensor_lifetime_type_e`, `vx_khr_nn.h`).
pub const TENSOR_LIFE_TIME_STATIC: i32 = 0;

/// Attributes queried or set.
pub mod attr {
    /// `VX_CONTEXT_VERSION` (u16).
    pub const CONTEXT_VERSION: i32 = 0x8_0101;
    /// `VX_CONTEXT_IMPLEMENTATION` (char[64]).
    pub const CONTEXT_IMPLEMENTATION: i32 = 0x8_0105;
    /// `VX_KERNEL_PARAMETERS` (u32).
    pub const KERNEL_PARAMETERS: i32 = 0x8_0400;
    /// `VX_PARAMETER_DIRECTION` (enum).
    pub const PARAMETER_DIRECTION: i32 = 0x8_0501;
    /// `VX_PARAMETER_META_FORMAT` (vx_meta_format).
    pub const PARAMETER_META_FORMAT: i32 = 0x8_0505;
    /// `VX_TENSOR_NUMBER_OF_DIMS` (vx_size).
    pub const TENSOR_NUMBER_OF_DIMS: i32 = 0x8_1500;
    /// `VX_TENSOR_DIMS` (vx_size[]).
    pub const TENSOR_DIMS: i32 = 0x8_1501;
    /// `VX_TENSOR_DATA_TYPE` (enum).
    pub const TENSOR_DATA_TYPE: i32 = 0x8_1502;
    /// `VX_TENSOR_FIXED_POINT_POSITION` (i8).
    pub const TENSOR_FIXED_POINT_POSITION: i32 = 0x8_1503;
    /// `VX_TENSOR_LIFETIME` (enum, Vivante: `VX_ATTRIBUTE_BASE(VX_ID_VIVANTE, VX_TYPE_TENSOR)
    /// + 0x5`, `vx_types.h`).
    pub const TENSOR_LIFETIME: i32 = 0x78_1505;
    /// `VX_TENSOR_QUANT_FORMAT` (enum, Vivante).
    pub const TENSOR_QUANT_FORMAT: i32 = 0x78_1500;
    /// `VX_TENSOR_ZERO_POINT` (i32, Vivante).
    pub const TENSOR_ZERO_POINT: i32 = 0x78_1501;
    /// `VX_TENSOR_SCALE` (f32, Vivante).
    pub const TENSOR_SCALE: i32 = 0x78_1502;
}

/// `vx_tensor_create_params_t` (72 bytes on x86-64): the quantization union is 40 bytes, its
/// affine member `{ f32 scale; i32 zeroPoint }` at its start, the DFP member an `i8` there.
#[repr(C)]
pub struct TensorCreateParams {
    /// `num_of_dims`.
    pub num_of_dims: u32,
    /// `sizes` (u32 per dimension, innermost first).
    pub sizes: *const u32,
    /// `data_format` (`vx_type_e`).
    pub data_format: i32,
    /// `quant_format`.
    pub quant_format: i32,
    /// `quant_data` (the union).
    pub quant_data: [u64; 5],
    /// `sparsity_type` (0: dense).
    pub sparsity_type: i32,
}

/// `vx_nn_convolution_params_ext2_t` (96 bytes): the base (padding, policies, rounding,
/// dilation), the right/bottom padding, pad mode and constant, strides and depth multiplier.
#[repr(C)]
#[derive(Default)]
pub struct ConvParamsExt2 {
    /// `padding_x` (left).
    pub padding_x: usize,
    /// `padding_y` (top).
    pub padding_y: usize,
    /// `overflow_policy`.
    pub overflow_policy: i32,
    /// `rounding_policy`.
    pub rounding_policy: i32,
    /// `down_scale_size_rounding`.
    pub down_scale_size_rounding: i32,
    /// `dilation_x` (0: none).
    pub dilation_x: usize,
    /// `dilation_y`.
    pub dilation_y: usize,
    /// `padding_x_right`.
    pub padding_x_right: usize,
    /// `padding_y_bottom`.
    pub padding_y_bottom: usize,
    /// `pad_mode` (0: constant).
    pub pad_mode: i32,
    /// `pad_const` (a scalar reference; null).
    pub pad_const: Ref,
    /// `stride_x`.
    pub stride_x: u32,
    /// `stride_y`.
    pub stride_y: u32,
    /// `depth_multiplier` (0: not depthwise).
    pub depth_multiplier: i32,
}

/// `vx_nn_pooling_params_ext_t` (40 bytes): the plain struct segfaults inside the driver, the
/// extended one works (measured).
#[repr(C)]
pub struct PoolingParamsExt {
    /// `pool_type`.
    pub pool_type: i32,
    /// `pool_size_x`.
    pub pool_size_x: u32,
    /// `pool_size_y`.
    pub pool_size_y: u32,
    /// `pool_pad_x_left`.
    pub pool_pad_x_left: u32,
    /// `pool_pad_x_right`.
    pub pool_pad_x_right: u32,
    /// `pool_pad_y_top`.
    pub pool_pad_y_top: u32,
    /// `pool_pad_y_bottom`.
    pub pool_pad_y_bottom: u32,
    /// `rounding`.
    pub rounding: i32,
    /// `stride_x`.
    pub stride_x: u32,
    /// `stride_y`.
    pub stride_y: u32,
}

/// `vx_nn_concat_params_t`.
#[repr(C)]
pub struct ConcatParams {
    /// The axis (innermost first).
    pub axis: u32,
}

/// `vx_nn_pad_params_t` (32 bytes): the front and back pads per dimension, their count, the
/// mode and a scalar holding the constant.
#[repr(C)]
pub struct PadParams {
    /// `pad_front_array`.
    pub front: *const i32,
    /// `pad_back_array`.
    pub back: *const i32,
    /// `numViewDimensions`.
    pub dims: u8,
    /// `pad_mode`.
    pub mode: i32,
    /// `pad_const` (a float32 scalar).
    pub value: Ref,
}

/// `vx_nn_stride_slice_params_t` (40 bytes): begin, end and stride tensors and three masks.
#[repr(C)]
pub struct StrideSliceParams {
    /// `begin_dims`.
    pub begin: Ref,
    /// `end_dims`.
    pub end: Ref,
    /// `stride_dims`.
    pub stride: Ref,
    /// `begin_mask`.
    pub begin_mask: i32,
    /// `end_mask`.
    pub end_mask: i32,
    /// `shrink_axis_mask`.
    pub shrink_axis_mask: i32,
}

/// `vx_nn_scale_params_t`: the interpolation.
#[repr(C)]
pub struct ScaleParams {
    /// `type`.
    pub kind: i32,
}

/// `vx_nn_reshape_params_t`: a tensor holding the new dimensions.
#[repr(C)]
pub struct ReshapeParams {
    /// An INT32 tensor of the output dimensions.
    pub dims: Ref,
}

macro_rules! api {
    ($($field:ident = $sym:literal : fn($($arg:ty),*) -> $ret:ty;)*) => {
        /// The entry points, resolved from the loaded library (which they must not outlive).
        pub struct Api {
            $(
                #[doc = concat!("`", $sym, "`.")]
                pub $field: unsafe extern "C" fn($($arg),*) -> $ret,
            )*
            _lib: libloading::Library,
        }

        impl Api {
            /// Load `path` and resolve every entry point.
            ///
            /// # Safety
            ///
            /// Loading runs the library's initializers; the caller trusts the vendor's driver
            /// (it runs only in the contained child process).
            pub unsafe fn load(path: &std::path::Path) -> Result<Api, String> {
                // SAFETY: see the function's contract.
                let lib = unsafe { libloading::Library::new(path) }
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                Ok(Api {
                    $(
                        // SAFETY: the symbol's type is the declared OpenVX signature.
                        $field: unsafe {
                            *lib.get::<unsafe extern "C" fn($($arg),*) -> $ret>(concat!($sym, "\0").as_bytes())
                                .map_err(|e| format!("{}: {e}", $sym))?
                        },
                    )*
                    _lib: lib,
                })
            }
        }
    };
}

api! {
    create_context = "vxCreateContext": fn() -> Ref;
    release_context = "vxReleaseContext": fn(*mut Ref) -> Status;
    get_status = "vxGetStatus": fn(Ref) -> Status;
    query_context = "vxQueryContext": fn(Ref, i32, *mut c_void, usize) -> Status;
    create_graph = "vxCreateGraph": fn(Ref) -> Ref;
    create_tensor2 = "vxCreateTensor2": fn(Ref, *const TensorCreateParams, usize) -> Ref;
    set_tensor_attribute = "vxSetTensorAttribute": fn(Ref, i32, *const c_void, usize) -> Status;
    create_virtual_tensor2 = "vxCreateVirtualTensor2": fn(Ref, *const TensorCreateParams, usize) -> Ref;
    copy_tensor_patch = "vxCopyTensorPatch": fn(Ref, usize, *const usize, *const usize, *const usize, *mut c_void, i32, i32) -> Status;
    convolution_layer = "vxConvolutionLayer": fn(Ref, Ref, Ref, Ref, *const ConvParamsExt2, usize, Ref) -> Ref;
    fully_connected_layer = "vxFullyConnectedLayer": fn(Ref, Ref, Ref, Ref, i32, i32, Ref) -> Ref;
    pooling_layer2 = "vxPoolingLayer2": fn(Ref, Ref, *const PoolingParamsExt, usize, Ref) -> Ref;
    activation_layer = "vxActivationLayer": fn(Ref, Ref, i32, f32, f32, Ref) -> Ref;
    softmax_layer = "vxSoftmaxLayer": fn(Ref, Ref, Ref) -> Ref;
    tensor_add_node = "vxTensorAddNode": fn(Ref, Ref, Ref, i32, Ref) -> Ref;
    tensor_multiply_node = "vxTensorMultiplyNode": fn(Ref, Ref, Ref, Ref, i32, i32, Ref) -> Ref;
    create_scalar = "vxCreateScalar": fn(Ref, i32, *const c_void) -> Ref;
    create_tensor_object_array = "vxCreateTensorObjectArray": fn(Ref, u32, *mut Ref) -> Ref;
    concat_indefinite_layer = "vxConcatIndefiniteLayer": fn(Ref, Ref, *const ConcatParams, usize, Ref) -> Ref;
    tensor_reshape_node = "vxTensorReshapeNode": fn(Ref, Ref, *const ReshapeParams, usize, Ref) -> Ref;
    identify_graph_inputs_and_outputs = "vxIdentifyGraphInputsAndOutputs": fn(Ref, u32, *mut Ref, u32, *mut Ref) -> Status;
    verify_graph = "vxVerifyGraph": fn(Ref) -> Status;
    process_graph = "vxProcessGraph": fn(Ref) -> Status;
    import_kernel_from_url = "vxImportKernelFromURL": fn(Ref, *const c_char, *const c_char) -> Ref;
    query_kernel = "vxQueryKernel": fn(Ref, i32, *mut c_void, usize) -> Status;
    release_kernel = "vxReleaseKernel": fn(*mut Ref) -> Status;
    get_kernel_parameter_by_index = "vxGetKernelParameterByIndex": fn(Ref, u32) -> Ref;
    query_parameter = "vxQueryParameter": fn(Ref, i32, *mut c_void, usize) -> Status;
    query_meta_format_attribute = "vxQueryMetaFormatAttribute": fn(Ref, i32, *mut c_void, usize) -> Status;
    create_generic_node = "vxCreateGenericNode": fn(Ref, Ref) -> Ref;
    tensor_permute_node = "vxTensorPermuteNode": fn(Ref, Ref, Ref, *mut u32, u32) -> Ref;
    prelu_layer = "vxPReluLayer": fn(Ref, Ref, Ref, Ref) -> Ref;
    batch_normalization_layer = "vxBatchNormalizationLayer": fn(Ref, f32, Ref, Ref, Ref, Ref, Ref, Ref) -> Ref;
    tensor_pad_node = "vxTensorPadNode": fn(Ref, Ref, Ref, *const PadParams, usize) -> Ref;
    tensor_stride_slice_node = "vxTensorStrideSliceNode": fn(Ref, Ref, *const StrideSliceParams, usize, Ref) -> Ref;
    tensor_scale_node = "vxTensorScaleNode": fn(Ref, Ref, *const ScaleParams, usize, Ref) -> Ref;
    set_parameter_by_index = "vxSetParameterByIndex": fn(Ref, u32, Ref) -> Status;
}

/// The `vx_status_e` name of a status code (negative codes are errors).
pub fn status_name(s: Status) -> &'static str {
    const NAMES: [&str; 26] = [
        "VX_SUCCESS",
        "VX_FAILURE",
        "VX_ERROR_NOT_IMPLEMENTED",
        "VX_ERROR_NOT_SUPPORTED",
        "VX_ERROR_NOT_SUFFICIENT",
        "VX_ERROR_NOT_ALLOCATED",
        "VX_ERROR_NOT_COMPATIBLE",
        "VX_ERROR_NO_RESOURCES",
        "VX_ERROR_NO_MEMORY",
        "VX_ERROR_OPTIMIZED_AWAY",
        "VX_ERROR_INVALID_PARAMETERS",
        "VX_ERROR_INVALID_MODULE",
        "VX_ERROR_INVALID_REFERENCE",
        "VX_ERROR_INVALID_LINK",
        "VX_ERROR_INVALID_FORMAT",
        "VX_ERROR_INVALID_DIMENSION",
        "VX_ERROR_INVALID_VALUE",
        "VX_ERROR_INVALID_TYPE",
        "VX_ERROR_INVALID_GRAPH",
        "VX_ERROR_INVALID_NODE",
        "VX_ERROR_INVALID_SCOPE",
        "VX_ERROR_GRAPH_SCHEDULED",
        "VX_ERROR_GRAPH_ABANDONED",
        "VX_ERROR_MULTIPLE_WRITERS",
        "VX_ERROR_REFERENCE_NONZERO",
        "VX_STATUS_MIN",
    ];
    usize::try_from(-i64::from(s))
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("unknown status")
}

/// The names of the `vx_type_e` values a tensor parameter reports.
pub fn type_name(t: i32) -> Option<&'static str> {
    Some(match t {
        ty::INT8 => "INT8",
        ty::UINT8 => "UINT8",
        ty::INT16 => "INT16",
        ty::UINT16 => "UINT16",
        ty::INT32 => "INT32",
        ty::UINT32 => "UINT32",
        ty::FLOAT32 => "FLOAT32",
        ty::FLOAT16 => "FLOAT16",
        ty::BFLOAT16 => "BFLOAT16",
        _ => return None,
    })
}

/// Bytes per element of the `vx_type_e` values a tensor parameter may hold.
pub fn type_size(t: i32) -> Option<usize> {
    Some(match t {
        ty::INT8 | ty::UINT8 => 1,
        ty::INT16 | ty::UINT16 | ty::FLOAT16 | ty::BFLOAT16 => 2,
        ty::INT32 | ty::UINT32 | ty::FLOAT32 => 4,
        _ => return None,
    })
}
