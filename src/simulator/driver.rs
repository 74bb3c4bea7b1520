//! The driver child: the only code that calls the vendor's library. `nbg vendor child RESULT`
//! reads one request from stdin (a JSON line, then the image bytes for a load from memory),
//! performs it through OpenVX and writes its response to RESULT (written whole, then renamed)
//! before anything is released, so a crash in the driver's teardown cannot lose the answer.

use super::ffi::{self, Api, Ref, Status};
use super::plan::{self, Node, Plan, Role};
use serde::{Deserialize, Serialize};
use std::ffi::{CString, c_void};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// What the parent asks.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "kebab-case")]
pub enum Request {
    /// Build the plan's graph, verify and process it: the driver saves the NBG where the
    /// parent's environment says.
    Compile {
        /// The graph.
        plan: Plan,
    },
    /// Build, verify and process each plan in turn in one context: the driver compiles the
    /// shader programs a graph needs once per context (about 10 s of CPU for a convolution's,
    /// then 0.02 s for the next graph that needs them; the files are byte-identical to lone
    /// compiles, which `nbg verify-generated` proves on every file). Each file is renamed to
    /// `out-I.nb` and its response appended to `BATCH_FILE` as a `CompiledLine` before the next.
    CompileBatch {
        /// The graphs.
        plans: Vec<Plan>,
    },
    /// Import an NBG with `vxImportKernelFromURL`: from a file (`vx_vivante_file`) or, when
    /// `path` is absent, from the `len` bytes that follow the request on stdin
    /// (`vx_vivante_pointer`).
    Load {
        /// The file, or none for memory.
        path: Option<PathBuf>,
        /// Bytes that follow on stdin when `path` is none.
        len: u64,
    },
    /// Import many images from memory, one after another in one context (`vx_vivante_pointer`):
    /// images of these lengths follow the request on stdin, back to back. Each verdict is
    /// appended to `BATCH_FILE` as it is known, so a crash loses only the image that caused it.
    LoadBatch {
        /// The images' lengths.
        lens: Vec<u64>,
    },
    /// Import an NBG from memory and run it once through a generic node: the `len` image bytes
    /// follow the request on stdin, then each input parameter's elements in its stored type,
    /// `inputs` bytes each, in parameter order. The outputs are written to `RUN_OUTPUTS`,
    /// back to back in parameter order, before the answer.
    Run {
        /// Bytes of the image.
        len: u64,
        /// Bytes of each input parameter's elements.
        inputs: Vec<u64>,
    },
}

/// The file in the child's folder a run's outputs are written to.
pub const RUN_OUTPUTS: &str = "outputs.bin";

/// The file in the child's folder that a batch's verdicts are appended to, one JSON line each.
pub const BATCH_FILE: &str = "batch.jsonl";
/// Most images in one batch.
pub const MAX_BATCH: usize = 4096;

/// One image's verdict in a batch line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchLine {
    /// Index of the image in the batch.
    pub i: usize,
    /// `vxImportKernelFromURL`'s status (0: accepted).
    pub status: i32,
}

/// One compile's response in a compile batch's lines (its file is `out-I.nb`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompiledLine {
    /// Index of the plan in the batch.
    pub i: usize,
    /// What the compile answered.
    pub response: Response,
    /// Seconds it took in the child.
    pub seconds: f64,
}

/// The file the driver is told to write (`child::save_env`), renamed after each compile of a
/// batch to `batch_output(i)`.
pub const OUT_FILE: &str = "out.nb";

/// The name of a compile batch's `i`th file in the child's folder.
pub fn batch_output(i: usize) -> String {
    format!("out-{i}.nb")
}

/// One kernel parameter as the loader reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    /// `input` or `output` (or the raw enum when neither).
    pub direction: String,
    /// Tensor dimensions, innermost first, when the meta format answers.
    pub dims: Option<Vec<u64>>,
    /// Element type name (`vx_type_e`), when known.
    pub data_type: Option<String>,
    /// Raw `vx_type_e`.
    pub data_type_code: Option<i32>,
    /// `vx_quantized_format_e`.
    pub quant_format: Option<i32>,
    /// Affine scale (quant format 2).
    pub scale: Option<f32>,
    /// Affine zero point (quant format 2).
    pub zero_point: Option<i32>,
    /// Fixed-point position (quant format 1).
    pub fixed_point_position: Option<i8>,
}

/// A driver call that returned an error status: the answer of a compile, a load and a run
/// alike.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverRefusal {
    /// The call.
    pub step: String,
    /// Its status code.
    pub status: i32,
    /// The status's name.
    pub status_name: String,
}

impl std::fmt::Display for DriverRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refused at {}: status {} ({})",
            self.step, self.status, self.status_name
        )
    }
}

/// What the child answers.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Response {
    /// The graph was verified and processed (the driver wrote its NBG).
    Compiled {
        /// `VX_CONTEXT_IMPLEMENTATION`.
        implementation: String,
        /// `VX_CONTEXT_VERSION` (0x0103 is OpenVX 1.3).
        version: u16,
    },
    /// The loader accepted the file.
    Accepted {
        /// `vx_vivante_file` or `vx_vivante_pointer`.
        import_type: String,
        /// Its parameters, in index order.
        parameters: Vec<Parameter>,
    },
    /// A call returned an error status (the step and the status).
    Refused(DriverRefusal),
    /// The imported graph was verified and processed (the outputs are in `RUN_OUTPUTS`).
    Ran {
        /// Its parameters, in index order.
        parameters: Vec<Parameter>,
        /// Bytes of each output parameter, in index order.
        outputs: Vec<u64>,
        /// Seconds `vxVerifyGraph` took.
        verify_seconds: f64,
        /// Seconds `vxProcessGraph` took.
        process_seconds: f64,
    },
    /// Every image of a batch was judged (the verdicts are in `BATCH_FILE`).
    Batch {
        /// Images judged.
        done: usize,
    },
    /// The child could not do what was asked (the library did not load, bad request).
    Error {
        /// Why.
        message: String,
    },
}

fn refused(step: &str, status: Status) -> Response {
    Response::Refused(DriverRefusal {
        step: step.into(),
        status,
        status_name: ffi::status_name(status).into(),
    })
}

/// The child's main: read the request, run it, write the response to `result` (before the
/// driver tears down: its teardown can crash after the work is done).
pub fn child_main(result: &Path) -> std::process::ExitCode {
    let answer = |response: &Response| -> bool {
        let tmp = result.with_extension("partial");
        let text = serde_json::to_vec(response).unwrap_or_default();
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, result))
            .is_ok()
    };
    let written = match read_request() {
        Ok((request, image)) => run(&request, &image, &answer),
        Err(message) => answer(&Response::Error { message }),
    };
    if written {
        std::process::ExitCode::SUCCESS
    } else {
        crate::exit::Exit::Usage.into()
    }
}

/// Bytes of an image handed over from memory, at most (the parser's own file bound).
const MAX_IMAGE: u64 = 4 << 30;

fn read_request() -> Result<(Request, Vec<u8>), String> {
    let mut stdin = std::io::stdin().lock();
    let mut line = Vec::new();
    // The request line is bounded: a plan with its constants (1 GiB of hex at most).
    std::io::BufRead::read_until(&mut (&mut stdin).take(1 << 30), b'\n', &mut line)
        .map_err(|e| format!("stdin: {e}"))?;
    let request: Request =
        serde_json::from_slice(&line).map_err(|e| format!("the request is not valid: {e}"))?;
    let mut image = Vec::new();
    if let Request::LoadBatch { lens } = &request {
        let total: u64 = lens.iter().sum();
        if lens.len() > MAX_BATCH || total > MAX_IMAGE {
            return Err(format!(
                "a batch of {} images, {total} bytes (at most {MAX_BATCH}, {MAX_IMAGE})",
                lens.len()
            ));
        }
        image.reserve_exact(total as usize);
        (&mut stdin)
            .take(total)
            .read_to_end(&mut image)
            .map_err(|e| format!("stdin: {e}"))?;
        if image.len() as u64 != total {
            return Err(format!("{} batch bytes of {total}", image.len()));
        }
    }
    if let Request::Run { len, inputs } = &request {
        let total = inputs
            .iter()
            .try_fold(*len, |a, &b| a.checked_add(b))
            .filter(|&t| t <= MAX_IMAGE && inputs.len() <= MAX_BATCH)
            .ok_or_else(|| {
                format!(
                    "a run of {len} image bytes and {} inputs is too large",
                    inputs.len()
                )
            })?;
        image.reserve_exact(total as usize);
        (&mut stdin)
            .take(total)
            .read_to_end(&mut image)
            .map_err(|e| format!("stdin: {e}"))?;
        if image.len() as u64 != total {
            return Err(format!("{} run bytes of {total}", image.len()));
        }
    }
    if let Request::Load { path: None, len } = &request {
        if *len > MAX_IMAGE {
            return Err(format!("an image of {len} bytes (at most {MAX_IMAGE})"));
        }
        image.reserve_exact(*len as usize);
        stdin
            .take(*len)
            .read_to_end(&mut image)
            .map_err(|e| format!("stdin: {e}"))?;
        if image.len() as u64 != *len {
            return Err(format!("{} image bytes of {len}", image.len()));
        }
    }
    Ok((request, image))
}

fn library() -> Result<Api, String> {
    let dir = std::env::var_os("VIVANTE_SDK_DIR")
        .ok_or("VIVANTE_SDK_DIR is not set in the driver child")?;
    let path = Path::new(&dir).join("lib/libOpenVX.so.1.3.0");
    // SAFETY: the vendor's driver, loaded only in this contained child.
    unsafe { Api::load(&path) }
}

/// Run the request and hand the response to `answer` before the context is released.
fn run(request: &Request, image: &[u8], answer: &dyn Fn(&Response) -> bool) -> bool {
    let api = match library() {
        Ok(a) => a,
        Err(message) => return answer(&Response::Error { message }),
    };
    // SAFETY: every call below follows the OpenVX contract: handles come from the library,
    // buffers outlive the calls that read them, sizes are the structures' own.
    unsafe {
        let ctx = (api.create_context)();
        let s = (api.get_status)(ctx);
        if s != ffi::SUCCESS {
            return answer(&refused("vxCreateContext", s));
        }
        let response = match request {
            Request::Compile { plan } => compile(&api, ctx, plan),
            Request::Load { path, .. } => load(&api, ctx, path.as_deref(), image),
            Request::LoadBatch { lens } => batch(&api, ctx, lens, image),
            Request::CompileBatch { plans } => compile_batch(&api, ctx, plans),
            Request::Run { len, inputs } => execute(&api, ctx, image, *len, inputs),
        };
        let written = answer(&response);
        if written && matches!(request, Request::CompileBatch { .. }) {
            // A context holding many graphs can hang in its release (measured: batches sat
            // until their wall limit after answering); its files are renamed and its answer
            // is written, so the process ends without tearing the driver down.
            std::process::exit(0);
        }
        let mut ctx = ctx;
        (api.release_context)(&mut ctx);
        written
    }
}

/// `vx_tensor_create_params_t` for a tensor of the plan.
fn params(t: &plan::Tensor, sizes: &[u32]) -> ffi::TensorCreateParams {
    let mut quant_data = [0u64; 5];
    let quant_format = match t.quant {
        Some(q) => {
            quant_data[0] = u64::from(q.scale.to_bits()) | (u64::from(q.zero_point as u32) << 32);
            ffi::quant::AFFINE_SCALE
        }
        None => ffi::quant::NONE,
    };
    ffi::TensorCreateParams {
        num_of_dims: sizes.len() as u32,
        sizes: sizes.as_ptr(),
        data_format: t.elem.vx(),
        quant_format,
        quant_data,
        sparsity_type: 0,
    }
}

unsafe fn compile(api: &Api, ctx: Ref, plan: &Plan) -> Response {
    unsafe {
        let mut implementation = [0u8; 64];
        (api.query_context)(
            ctx,
            ffi::attr::CONTEXT_IMPLEMENTATION,
            implementation.as_mut_ptr().cast(),
            implementation.len(),
        );
        let mut version = 0u16;
        (api.query_context)(
            ctx,
            ffi::attr::CONTEXT_VERSION,
            (&raw mut version).cast(),
            2,
        );
        let graph = (api.create_graph)(ctx);
        let s = (api.get_status)(graph);
        if s != ffi::SUCCESS {
            return refused("vxCreateGraph", s);
        }
        let mut tensors: Vec<Ref> = Vec::with_capacity(plan.tensors.len());
        for t in &plan.tensors {
            let p = params(t, &t.dims);
            let size = std::mem::size_of::<ffi::TensorCreateParams>();
            let handle = match t.role {
                Role::Virtual => (api.create_virtual_tensor2)(graph, &p, size),
                _ => (api.create_tensor2)(ctx, &p, size),
            };
            let s = (api.get_status)(handle);
            if s != ffi::SUCCESS {
                return refused(&format!("vxCreateTensor2 {}", t.name), s);
            }
            if let Role::Constant(data) = &t.role {
                let mut data = data.clone();
                let s = copy_whole(
                    api,
                    handle,
                    &t.dims,
                    t.elem.size(),
                    data.as_mut_ptr().cast::<c_void>(),
                    ffi::WRITE_ONLY,
                );
                if s != ffi::SUCCESS {
                    return refused(&format!("vxCopyTensorPatch {}", t.name), s);
                }
                if plan.constants == plan::Lifetime::Static {
                    let lifetime = ffi::TENSOR_LIFE_TIME_STATIC;
                    let s = (api.set_tensor_attribute)(
                        handle,
                        ffi::attr::TENSOR_LIFETIME,
                        (&raw const lifetime).cast(),
                        std::mem::size_of::<i32>(),
                    );
                    if s != ffi::SUCCESS {
                        return refused(&format!("vxSetTensorAttribute {}", t.name), s);
                    }
                }
            }
            tensors.push(handle);
        }
        let null = std::ptr::null_mut();
        let at = |i: usize| tensors[i];
        for (k, node) in plan.nodes.iter().enumerate() {
            let (what, handle) = match node {
                Node::Conv {
                    input,
                    weights,
                    bias,
                    pads,
                    strides,
                    dilation,
                    depth_multiplier,
                    output,
                } => {
                    let p = ffi::ConvParamsExt2 {
                        padding_x: pads[0] as usize,
                        padding_x_right: pads[1] as usize,
                        padding_y: pads[2] as usize,
                        padding_y_bottom: pads[3] as usize,
                        overflow_policy: ffi::CONVERT_POLICY_SATURATE,
                        rounding_policy: ffi::ROUND_POLICY_TO_NEAREST_EVEN,
                        down_scale_size_rounding: ffi::DS_SIZE_ROUNDING_FLOOR,
                        dilation_x: dilation[0] as usize,
                        dilation_y: dilation[1] as usize,
                        pad_mode: 0,
                        pad_const: null,
                        stride_x: strides[0],
                        stride_y: strides[1],
                        depth_multiplier: *depth_multiplier as i32,
                    };
                    let b = bias.map_or(null, at);
                    let n = (api.convolution_layer)(
                        graph,
                        at(*input),
                        at(*weights),
                        b,
                        &p,
                        std::mem::size_of::<ffi::ConvParamsExt2>(),
                        at(*output),
                    );
                    ("vxConvolutionLayer", n)
                }
                Node::FullyConnected {
                    input,
                    weights,
                    bias,
                    output,
                } => (
                    "vxFullyConnectedLayer",
                    (api.fully_connected_layer)(
                        graph,
                        at(*input),
                        at(*weights),
                        bias.map_or(null, at),
                        ffi::CONVERT_POLICY_SATURATE,
                        ffi::ROUND_POLICY_TO_NEAREST_EVEN,
                        at(*output),
                    ),
                ),
                Node::Pool {
                    kind,
                    input,
                    size,
                    pads,
                    strides,
                    output,
                } => {
                    let p = ffi::PoolingParamsExt {
                        pool_type: match kind {
                            plan::PoolKind::Max => ffi::POOLING_MAX,
                            plan::PoolKind::Avg => ffi::POOLING_AVG,
                        },
                        pool_size_x: size[0],
                        pool_size_y: size[1],
                        pool_pad_x_left: pads[0],
                        pool_pad_x_right: pads[1],
                        pool_pad_y_top: pads[2],
                        pool_pad_y_bottom: pads[3],
                        rounding: ffi::DS_SIZE_ROUNDING_FLOOR,
                        stride_x: strides[0],
                        stride_y: strides[1],
                    };
                    (
                        "vxPoolingLayer2",
                        (api.pooling_layer2)(
                            graph,
                            at(*input),
                            &p,
                            std::mem::size_of::<ffi::PoolingParamsExt>(),
                            at(*output),
                        ),
                    )
                }
                Node::Activation {
                    function,
                    input,
                    output,
                } => {
                    // OpenVX's functions and their a, b (tanh is a tanh(b x)).
                    let (f, a, b) = match *function {
                        plan::Activation::Relu => (ffi::ACTIVATION_RELU, 0.0, 0.0),
                        plan::Activation::Logistic => (ffi::ACTIVATION_LOGISTIC, 0.0, 0.0),
                        plan::Activation::Tanh => (ffi::ACTIVATION_HYPERBOLIC_TAN, 1.0, 1.0),
                        plan::Activation::BoundedRelu { upper } => {
                            (ffi::ACTIVATION_BRELU, upper, 0.0)
                        }
                        plan::Activation::LeakyRelu { alpha } => {
                            (ffi::ACTIVATION_LEAKYRELU, alpha, 0.0)
                        }
                        plan::Activation::HardSwish => (ffi::ACTIVATION_HSWISH, 0.0, 0.0),
                    };
                    (
                        "vxActivationLayer",
                        (api.activation_layer)(graph, at(*input), f, a, b, at(*output)),
                    )
                }
                Node::Softmax { input, output } => (
                    "vxSoftmaxLayer",
                    (api.softmax_layer)(graph, at(*input), at(*output)),
                ),
                Node::Add { a, b, output } => (
                    "vxTensorAddNode",
                    (api.tensor_add_node)(
                        graph,
                        at(*a),
                        at(*b),
                        ffi::CONVERT_POLICY_SATURATE,
                        at(*output),
                    ),
                ),
                Node::Mul { a, b, output } => {
                    let one = 1.0f32;
                    let scale = (api.create_scalar)(ctx, ffi::ty::FLOAT32, (&raw const one).cast());
                    (
                        "vxTensorMultiplyNode",
                        (api.tensor_multiply_node)(
                            graph,
                            at(*a),
                            at(*b),
                            scale,
                            ffi::CONVERT_POLICY_SATURATE,
                            ffi::ROUND_POLICY_TO_NEAREST_EVEN,
                            at(*output),
                        ),
                    )
                }
                Node::Concat {
                    inputs,
                    axis,
                    output,
                } => {
                    let mut list: Vec<Ref> = inputs.iter().map(|&i| at(i)).collect();
                    let array =
                        (api.create_tensor_object_array)(ctx, list.len() as u32, list.as_mut_ptr());
                    let p = ffi::ConcatParams { axis: *axis };
                    (
                        "vxConcatIndefiniteLayer",
                        (api.concat_indefinite_layer)(
                            graph,
                            array,
                            &p,
                            std::mem::size_of::<ffi::ConcatParams>(),
                            at(*output),
                        ),
                    )
                }
                Node::Permute {
                    input,
                    perm,
                    output,
                } => {
                    let mut perm = perm.clone();
                    (
                        "vxTensorPermuteNode",
                        (api.tensor_permute_node)(
                            graph,
                            at(*input),
                            at(*output),
                            perm.as_mut_ptr(),
                            perm.len() as u32,
                        ),
                    )
                }
                Node::PRelu {
                    input,
                    alpha,
                    output,
                } => (
                    "vxPReluLayer",
                    (api.prelu_layer)(graph, at(*input), at(*alpha), at(*output)),
                ),
                Node::BatchNorm {
                    input,
                    eps,
                    mean,
                    variance,
                    gamma,
                    beta,
                    output,
                } => (
                    "vxBatchNormalizationLayer",
                    (api.batch_normalization_layer)(
                        graph,
                        *eps,
                        at(*mean),
                        at(*variance),
                        at(*gamma),
                        at(*beta),
                        at(*input),
                        at(*output),
                    ),
                ),
                Node::Pad {
                    input,
                    front,
                    back,
                    value,
                    output,
                } => {
                    let scalar =
                        (api.create_scalar)(ctx, ffi::ty::FLOAT32, (&raw const *value).cast());
                    let p = ffi::PadParams {
                        front: front.as_ptr(),
                        back: back.as_ptr(),
                        dims: front.len() as u8,
                        mode: ffi::PAD_CONSTANT,
                        value: scalar,
                    };
                    (
                        "vxTensorPadNode",
                        (api.tensor_pad_node)(
                            graph,
                            at(*input),
                            at(*output),
                            &p,
                            std::mem::size_of::<ffi::PadParams>(),
                        ),
                    )
                }
                Node::Slice {
                    input,
                    begin,
                    end,
                    stride,
                    output,
                } => {
                    let p = ffi::StrideSliceParams {
                        begin: at(*begin),
                        end: at(*end),
                        stride: at(*stride),
                        begin_mask: 0,
                        end_mask: 0,
                        shrink_axis_mask: 0,
                    };
                    (
                        "vxTensorStrideSliceNode",
                        (api.tensor_stride_slice_node)(
                            graph,
                            at(*input),
                            &p,
                            std::mem::size_of::<ffi::StrideSliceParams>(),
                            at(*output),
                        ),
                    )
                }
                Node::ResizeNearest { input, output } => {
                    let p = ffi::ScaleParams {
                        kind: ffi::INTERPOLATION_NEAREST_NEIGHBOR,
                    };
                    (
                        "vxTensorScaleNode",
                        (api.tensor_scale_node)(
                            graph,
                            at(*input),
                            &p,
                            std::mem::size_of::<ffi::ScaleParams>(),
                            at(*output),
                        ),
                    )
                }
                Node::Reshape {
                    input,
                    shape,
                    output,
                } => {
                    let p = ffi::ReshapeParams { dims: at(*shape) };
                    (
                        "vxTensorReshapeNode",
                        (api.tensor_reshape_node)(
                            graph,
                            at(*input),
                            &p,
                            std::mem::size_of::<ffi::ReshapeParams>(),
                            at(*output),
                        ),
                    )
                }
            };
            let s = (api.get_status)(handle);
            if s != ffi::SUCCESS {
                return refused(&format!("{what} (node {k})"), s);
            }
        }
        let mut ins: Vec<Ref> = plan.inputs.iter().map(|&i| tensors[i]).collect();
        let mut outs: Vec<Ref> = plan.outputs.iter().map(|&i| tensors[i]).collect();
        let s = (api.identify_graph_inputs_and_outputs)(
            graph,
            ins.len() as u32,
            ins.as_mut_ptr(),
            outs.len() as u32,
            outs.as_mut_ptr(),
        );
        if s != ffi::SUCCESS {
            return refused("vxIdentifyGraphInputsAndOutputs", s);
        }
        let s = (api.verify_graph)(graph);
        if s != ffi::SUCCESS {
            return refused("vxVerifyGraph", s);
        }
        // The driver writes the network binary while it processes the graph.
        let s = (api.process_graph)(graph);
        if s != ffi::SUCCESS {
            return refused("vxProcessGraph", s);
        }
        let end = implementation.iter().position(|&b| b == 0).unwrap_or(64);
        Response::Compiled {
            implementation: String::from_utf8_lossy(&implementation[..end]).into_owned(),
            version,
        }
    }
}

unsafe fn load(api: &Api, ctx: Ref, path: Option<&Path>, image: &[u8]) -> Response {
    let (kind, url) = match path {
        Some(p) => {
            let Ok(c) = CString::new(p.as_os_str().as_encoded_bytes()) else {
                return Response::Error {
                    message: "the path holds a NUL byte".into(),
                };
            };
            ("vx_vivante_file", UrlArg::Path(c))
        }
        None => ("vx_vivante_pointer", UrlArg::Memory(image.as_ptr())),
    };
    // SAFETY: the path or the image outlives the import.
    match unsafe { import(api, ctx, kind, &url) } {
        Ok((_, parameters)) => Response::Accepted {
            import_type: kind.into(),
            parameters,
        },
        Err(r) => r,
    }
}

/// `vxImportKernelFromURL` of `url` as `kind`, and the kernel's parameters in index order.
unsafe fn import(
    api: &Api,
    ctx: Ref,
    kind: &str,
    url: &UrlArg,
) -> Result<(Ref, Vec<Parameter>), Response> {
    unsafe {
        let ty = CString::new(kind).unwrap_or_default();
        let url_ptr = match url {
            UrlArg::Path(c) => c.as_ptr(),
            UrlArg::Memory(p) => p.cast(),
        };
        let kernel = (api.import_kernel_from_url)(ctx, ty.as_ptr(), url_ptr);
        let s = (api.get_status)(kernel);
        if kernel.is_null() || s != ffi::SUCCESS {
            return Err(refused(
                "vxImportKernelFromURL",
                if s == 0 { -1 } else { s },
            ));
        }
        let mut count = 0u32;
        let s = (api.query_kernel)(
            kernel,
            ffi::attr::KERNEL_PARAMETERS,
            (&raw mut count).cast(),
            4,
        );
        if s != ffi::SUCCESS {
            return Err(refused("vxQueryKernel(VX_KERNEL_PARAMETERS)", s));
        }
        // A kernel declares at most a few hundred parameters; bound the loop all the same.
        let mut parameters = Vec::new();
        for i in 0..count.min(4096) {
            let p = (api.get_kernel_parameter_by_index)(kernel, i);
            if (api.get_status)(p) != ffi::SUCCESS {
                return Err(refused("vxGetKernelParameterByIndex", (api.get_status)(p)));
            }
            parameters.push(parameter(api, p));
        }
        Ok((kernel, parameters))
    }
}

/// A parameter's tensor as the run creates it: its dimensions (innermost first),
/// `vx_tensor_create_params_t` (sizes not yet set) and its element and total bytes; `None` when
/// the loader did not report a tensor format the run can create.
struct RunTensor {
    dims: Vec<u32>,
    params: ffi::TensorCreateParams,
    elem: usize,
    bytes: usize,
}

fn run_tensor(p: &Parameter) -> Option<RunTensor> {
    let dims: Vec<u32> = p
        .dims
        .as_ref()?
        .iter()
        .map(|&d| u32::try_from(d).ok())
        .collect::<Option<_>>()?;
    let code = p.data_type_code?;
    let elem = ffi::type_size(code)?;
    let bytes = dims
        .iter()
        .try_fold(elem, |a, &d| a.checked_mul(d as usize))?;
    let mut quant_data = [0u64; 5];
    let quant_format = match p.quant_format.unwrap_or(ffi::quant::NONE) {
        ffi::quant::AFFINE_SCALE => {
            quant_data[0] = u64::from(p.scale?.to_bits()) | (u64::from(p.zero_point? as u32) << 32);
            ffi::quant::AFFINE_SCALE
        }
        ffi::quant::DYNAMIC_FIXED_POINT => {
            quant_data[0] = u64::from(p.fixed_point_position? as u8);
            ffi::quant::DYNAMIC_FIXED_POINT
        }
        _ => ffi::quant::NONE,
    };
    let params = ffi::TensorCreateParams {
        num_of_dims: dims.len() as u32,
        sizes: std::ptr::null(),
        data_format: code,
        quant_format,
        quant_data,
        sparsity_type: 0,
    };
    Some(RunTensor {
        dims,
        params,
        elem,
        bytes,
    })
}

/// Copy a whole tensor of `dims` (innermost first, `elem` bytes each) to or from `data`.
unsafe fn copy_whole(
    api: &Api,
    tensor: Ref,
    dims: &[u32],
    elem: usize,
    data: *mut c_void,
    usage: i32,
) -> Status {
    let n = dims.len();
    let start = vec![0usize; n];
    let end: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let mut stride = vec![elem; n];
    for i in 1..n {
        stride[i] = stride[i - 1] * end[i - 1];
    }
    // SAFETY: `data` holds the tensor's elements (the caller sized it from `dims`).
    unsafe {
        (api.copy_tensor_patch)(
            tensor,
            n,
            start.as_ptr(),
            end.as_ptr(),
            stride.as_ptr(),
            data,
            usage,
            ffi::MEMORY_TYPE_HOST,
        )
    }
}

/// Import the first `len` bytes of `bytes` from memory and run the graph once: one generic
/// node, one tensor per parameter as the loader describes it, the inputs (the rest of `bytes`,
/// `inputs` bytes each) copied in, the outputs written to `RUN_OUTPUTS`.
unsafe fn execute(api: &Api, ctx: Ref, bytes: &[u8], len: u64, inputs: &[u64]) -> Response {
    let Some((image, mut data)) = usize::try_from(len)
        .ok()
        .and_then(|l| bytes.split_at_checked(l))
    else {
        return Response::Error {
            message: format!("{len} image bytes of {}", bytes.len()),
        };
    };
    let url = UrlArg::Memory(image.as_ptr());
    // SAFETY: `image` outlives the graph; every handle below is the library's.
    unsafe {
        let (kernel, parameters) = match import(api, ctx, "vx_vivante_pointer", &url) {
            Ok(k) => k,
            Err(r) => return r,
        };
        let graph = (api.create_graph)(ctx);
        let s = (api.get_status)(graph);
        if s != ffi::SUCCESS {
            return refused("vxCreateGraph", s);
        }
        let node = (api.create_generic_node)(graph, kernel);
        let s = (api.get_status)(node);
        if node.is_null() || s != ffi::SUCCESS {
            return refused("vxCreateGenericNode", if s == 0 { -1 } else { s });
        }
        let mut tensors = Vec::with_capacity(parameters.len());
        for (i, p) in parameters.iter().enumerate() {
            let Some(mut rt) = run_tensor(p) else {
                return Response::Error {
                    message: format!("parameter {i}: the loader reports no tensor format ({p:?})"),
                };
            };
            rt.params.sizes = rt.dims.as_ptr();
            let t = (api.create_tensor2)(
                ctx,
                &rt.params,
                std::mem::size_of::<ffi::TensorCreateParams>(),
            );
            let s = (api.get_status)(t);
            if s != ffi::SUCCESS {
                return refused(&format!("vxCreateTensor2 parameter {i}"), s);
            }
            let s = (api.set_parameter_by_index)(node, i as u32, t);
            if s != ffi::SUCCESS {
                return refused(&format!("vxSetParameterByIndex {i}"), s);
            }
            tensors.push((t, rt));
        }
        let start = std::time::Instant::now();
        let s = (api.verify_graph)(graph);
        if s != ffi::SUCCESS {
            return refused("vxVerifyGraph", s);
        }
        let verify_seconds = start.elapsed().as_secs_f64();
        let is_input = |p: &Parameter| p.direction == "input";
        let wanted = parameters.iter().filter(|p| is_input(p)).count();
        if wanted != inputs.len() {
            return Response::Error {
                message: format!("the graph has {wanted} inputs, {} were given", inputs.len()),
            };
        }
        let mut given = inputs.iter();
        for (p, (t, rt)) in parameters.iter().zip(&tensors) {
            if !is_input(p) {
                continue;
            }
            let n = given.next().copied().unwrap_or(0);
            if n != rt.bytes as u64 || data.len() < rt.bytes {
                return Response::Error {
                    message: format!("an input of {} bytes was given {n}", rt.bytes),
                };
            }
            let (this, rest) = data.split_at(rt.bytes);
            data = rest;
            let mut buf = this.to_vec();
            let s = copy_whole(
                api,
                *t,
                &rt.dims,
                rt.elem,
                buf.as_mut_ptr().cast(),
                ffi::WRITE_ONLY,
            );
            if s != ffi::SUCCESS {
                return refused("vxCopyTensorPatch (input)", s);
            }
        }
        let start = std::time::Instant::now();
        let s = (api.process_graph)(graph);
        if s != ffi::SUCCESS {
            return refused("vxProcessGraph", s);
        }
        let process_seconds = start.elapsed().as_secs_f64();
        let mut out = Vec::new();
        let mut outputs = Vec::new();
        for (p, (t, rt)) in parameters.iter().zip(&tensors) {
            if is_input(p) {
                continue;
            }
            let mut buf = vec![0u8; rt.bytes];
            let s = copy_whole(
                api,
                *t,
                &rt.dims,
                rt.elem,
                buf.as_mut_ptr().cast(),
                ffi::READ_ONLY,
            );
            if s != ffi::SUCCESS {
                return refused("vxCopyTensorPatch (output)", s);
            }
            outputs.push(buf.len() as u64);
            out.extend_from_slice(&buf);
        }
        if let Err(e) = std::fs::write(RUN_OUTPUTS, &out) {
            return Response::Error {
                message: format!("{RUN_OUTPUTS}: {e}"),
            };
        }
        Response::Ran {
            parameters,
            outputs,
            verify_seconds,
            process_seconds,
        }
    }
}

/// Compile each plan of a batch in turn, renaming its file and appending its response to
/// `BATCH_FILE` (in the child's own folder) before the next.
unsafe fn compile_batch(api: &Api, ctx: Ref, plans: &[Plan]) -> Response {
    let mut out = match Lines::create() {
        Ok(l) => l,
        Err(e) => return e,
    };
    for (i, plan) in plans.iter().enumerate() {
        let start = std::time::Instant::now();
        // SAFETY: as for one compile; the graphs stay in the context until it is released.
        let response = unsafe { compile(api, ctx, plan) };
        let seconds = start.elapsed().as_secs_f64();
        if matches!(response, Response::Compiled { .. })
            && std::fs::rename(OUT_FILE, batch_output(i)).is_err()
        {
            return Response::Error {
                message: format!("compile {i}: the driver wrote no {OUT_FILE}"),
            };
        }
        if let Err(e) = out.append(&CompiledLine {
            i,
            response,
            seconds,
        }) {
            return e;
        }
    }
    Response::Batch { done: plans.len() }
}

/// A batch's verdict lines, each flushed as it is known.
struct Lines(std::fs::File);

impl Lines {
    fn create() -> Result<Lines, Response> {
        std::fs::File::create(BATCH_FILE)
            .map(Lines)
            .map_err(|e| Response::Error {
                message: format!("{BATCH_FILE}: {e}"),
            })
    }

    fn append(&mut self, line: &impl Serialize) -> Result<(), Response> {
        use std::io::Write as _;
        let mut text = serde_json::to_vec(line).unwrap_or_default();
        text.push(b'\n');
        self.0
            .write_all(&text)
            .and_then(|_| self.0.flush())
            .map_err(|_| Response::Error {
                message: format!("{BATCH_FILE}: write failed"),
            })
    }
}

/// Import each image of a batch in turn, appending its status to `BATCH_FILE` (in the working
/// folder, the child's own) before the next.
unsafe fn batch(api: &Api, ctx: Ref, lens: &[u64], images: &[u8]) -> Response {
    let mut out = match Lines::create() {
        Ok(l) => l,
        Err(e) => return e,
    };
    let ty = CString::new("vx_vivante_pointer").unwrap_or_default();
    let mut at = 0usize;
    for (i, &len) in lens.iter().enumerate() {
        let image = &images[at..at + len as usize];
        at += len as usize;
        // SAFETY: the image outlives the import; the kernel handle is the library's.
        let status = unsafe {
            let mut kernel = (api.import_kernel_from_url)(ctx, ty.as_ptr(), image.as_ptr().cast());
            let s = (api.get_status)(kernel);
            if kernel.is_null() {
                if s == 0 { -1 } else { s }
            } else {
                if s == ffi::SUCCESS {
                    (api.release_kernel)(&mut kernel);
                }
                s
            }
        };
        if let Err(e) = out.append(&BatchLine { i, status }) {
            return e;
        }
    }
    Response::Batch { done: lens.len() }
}

enum UrlArg {
    Path(CString),
    Memory(*const u8),
}

unsafe fn parameter(api: &Api, p: Ref) -> Parameter {
    unsafe {
        let mut dir = -1i32;
        (api.query_parameter)(p, ffi::attr::PARAMETER_DIRECTION, (&raw mut dir).cast(), 4);
        let mut meta: Ref = std::ptr::null_mut();
        let has_meta = (api.query_parameter)(
            p,
            ffi::attr::PARAMETER_META_FORMAT,
            (&raw mut meta).cast(),
            std::mem::size_of::<Ref>(),
        ) == ffi::SUCCESS
            && !meta.is_null();
        let q = |attr: i32, ptr: *mut c_void, size: usize| {
            has_meta && (api.query_meta_format_attribute)(meta, attr, ptr, size) == ffi::SUCCESS
        };
        let mut n = 0usize;
        let dims = (q(ffi::attr::TENSOR_NUMBER_OF_DIMS, (&raw mut n).cast(), 8) && n <= 8)
            .then(|| {
                let mut d = [0usize; 8];
                q(ffi::attr::TENSOR_DIMS, d.as_mut_ptr().cast(), 8 * n)
                    .then(|| d[..n].iter().map(|&x| x as u64).collect())
            })
            .flatten();
        let mut dt = 0i32;
        let data_type_code = q(ffi::attr::TENSOR_DATA_TYPE, (&raw mut dt).cast(), 4).then_some(dt);
        let mut qf = 0i32;
        let quant_format = q(ffi::attr::TENSOR_QUANT_FORMAT, (&raw mut qf).cast(), 4).then_some(qf);
        let (mut scale, mut zp, mut fpp) = (0f32, 0i32, 0i8);
        let affine = quant_format == Some(ffi::quant::AFFINE_SCALE);
        let dfp = quant_format == Some(ffi::quant::DYNAMIC_FIXED_POINT);
        Parameter {
            direction: match dir {
                ffi::INPUT => "input".into(),
                ffi::OUTPUT => "output".into(),
                d => format!("0x{d:x}"),
            },
            dims,
            data_type: data_type_code.and_then(ffi::type_name).map(str::to_string),
            data_type_code,
            quant_format,
            scale: (affine && q(ffi::attr::TENSOR_SCALE, (&raw mut scale).cast(), 4))
                .then_some(scale),
            zero_point: (affine && q(ffi::attr::TENSOR_ZERO_POINT, (&raw mut zp).cast(), 4))
                .then_some(zp),
            fixed_point_position: (dfp
                && q(
                    ffi::attr::TENSOR_FIXED_POINT_POSITION,
                    (&raw mut fpp).cast(),
                    1,
                ))
            .then_some(fpp),
        }
    }
}
