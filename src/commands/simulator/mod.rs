//! `nbg vendor ...`: the vendor's simulator driver as a peer, one file per subcommand (`targets`,
//! `compile`, `capture`, `load`, `run`, `controls` with `capture-sets` and `models`, `sweep`,
//! `agreement`, `compat`), the Command enum and the helpers they share here.

mod agreement;
mod capture;
mod compat;
mod compile;
mod controls;
mod load;
mod run;
pub mod sweep;
mod targets;

use super::print_json;
use crate::commands::args::{Format, Replace};
use nbg_lab::simulator::{self, VendorError};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Command {
    /// The configurations the driver carries (name, PID); with FILE, the one its target word
    /// selects.
    Targets {
        /// An NBG whose target word (offset 8) selects a configuration.
        file: Option<PathBuf>,
        #[command(flatten)]
        format: crate::commands::args::Format,
    },
    /// Admit MODEL.onnx with the ONNX audit, build it through OpenVX and have the driver save
    /// it as OUT.nb (float32 models as float16, QDQ models quantized). Exit 0 written, 1 the
    /// model or the driver refused, 2 usage or a missing driver.
    Compile {
        /// The ONNX model to compile
        model: PathBuf,
        /// A configuration name, or 0xPID.
        #[arg(long)]
        target: String,
        #[arg(short = 'o', long = "output", alias = "out", value_name = "OUT.nb")]
        out: PathBuf,
        /// The embedded network name (VIV_VX_NBG_NAME); the driver's default otherwise.
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        replace: crate::commands::args::Replace,
        #[command(flatten)]
        format: crate::commands::args::Format,
    },
    /// Compile A twice (A1, A2) and B once into the new folder DIR with a differential.json
    /// naming the one source quantity that differs (refused when A and B differ in more), keyed
    /// by its role in the graph (`zero-point:graph.output[0]`, with its other roles and its
    /// tensor's name beside it), and the model's other Q/DQ parameters as context; each model's
    /// graph name is compiled in as
    /// the network name. Exit 0 written with A1 = A2, 1 refused or A1 != A2, 2 usage or a
    /// missing driver.
    Capture {
        /// Model A, compiled twice (A1, A2)
        a: PathBuf,
        /// Model B: A with one source quantity changed
        b: PathBuf,
        #[arg(long)]
        target: String,
        #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
        out: PathBuf,
        #[command(flatten)]
        format: crate::commands::args::Format,
    },
    /// Import FILE with the vendor's loader in a child process (from memory: the bytes are
    /// handed over on a pipe, never written): accepted with its parameters, or refused with
    /// its status; nbg's I/O records are compared with the loader's. Exit 0 when the loader
    /// accepts, nbg parses and their I/O agree; 1 when the loader refuses or crashes, nbg
    /// refuses, or the I/O differs; 2 usage or a missing driver.
    Load {
        /// The NBG file to load, from memory unless --from-file
        file: PathBuf,
        /// A configuration name or 0xPID; the file's own target word by default.
        #[arg(long)]
        target: Option<String>,
        /// Import from the path (`vx_vivante_file`) instead of from memory.
        #[arg(long)]
        from_file: bool,
        #[command(flatten)]
        format: crate::commands::args::Format,
    },
    /// Run FILE once on the simulator: loaded from memory in a child process, the inputs of
    /// IN.npz (named, shaped and typed as nbg's parse of FILE's input records says: the stored
    /// type as it is, or float32, converted to affine uint8/int8, dynamic fixed point, float16
    /// or bfloat16), the outputs converted back to float32 and written to OUT.npz. Files of
    /// versions 0x00020000-0x00020004 are handed to the driver with the version word read as
    /// 0x00020005, in memory only, and the report says so. With --substitute, bytes are put in
    /// place in memory first and the checksums recomputed (an experiment on what the hardware
    /// reads; the report lists each). One run of a board file takes 5-15 s and about 0.4 GB.
    /// Exit 0 ran, 1 nbg refuses the file or the driver refuses, crashes or hangs, 2 usage (an
    /// input that does not match, with its name; a substitution that cannot be made) or a
    /// missing driver.
    Run {
        /// The NBG file to run
        file: PathBuf,
        /// The inputs: an .npz of arrays named as the file's inputs.
        #[arg(long, value_name = "IN.npz")]
        input: PathBuf,
        #[arg(short = 'o', long = "output", alias = "out", value_name = "OUT.npz")]
        out: PathBuf,
        /// A configuration name or 0xPID; the file's own target word by default.
        #[arg(long)]
        target: Option<String>,
        /// OFFSET=HEX (repeatable): put these bytes at this file offset (decimal or 0x hex) in
        /// memory before the run, then recompute the section-40 values and the file CRC. The
        /// file is never changed or written. Refused past the end of the file, on the CRC field
        /// or a section-40 value, and where two overlap.
        #[arg(long, value_name = "OFFSET=HEX")]
        substitute: Vec<nbg_lab::simulator::substitute::Substitution>,
        #[command(flatten)]
        replace: crate::commands::args::Replace,
        #[command(flatten)]
        format: crate::commands::args::Format,
    },
    /// controls/serializer: recompile every control (each model for eight targets) and compare
    /// with the committed files, or with --write regenerate them. Exit 0 identical or written,
    /// 1 a difference, 2 a missing driver.
    Controls {
        #[arg(long)]
        write: bool,
    },
    /// differentials/serializer: recompile every capture set (conv and add models on an
    /// NN-engine part, a shader-only part and 0x1000003b (on shaders), a Gemm + Relu on a part that runs the Relu as an NN
    /// command and on one that runs it as a TP command, static-constant conv (3x3 alone, with a fused Relu or MaxPool, and 5x5),
    /// depthwise and Gemm models on the parts that run them on NN (8-bit on 0x1000003b and 0x9f,
    /// float16 on 0x1000000e), and the same quantities in models in a user's own names; one
    /// quantity changed per B, keyed by its role in the graph; 326 compiles in one driver
    /// context per target and network name, A2 in another; about 5 minutes on 2 cores) and compare with the committed
    /// files, or with --write regenerate them. Exit 0 identical or written, 1 a difference, 2
    /// a missing driver.
    CaptureSets {
        #[arg(long)]
        write: bool,
    },
    /// Every NBG the project holds (controls/, differentials/) and, with --corpus, the public
    /// files: nbg's verdict beside the vendor loader's under the configuration the file's
    /// target word selects (from memory, one batch per configuration). Exit 0 when they agree
    /// on every file, 1 when a file is listed as a disagreement, 2 a missing driver.
    Agreement {
        /// A folder of further NBG files (../shared/corpus/v1).
        #[arg(long, value_name = "DIR")]
        corpus: Option<PathBuf>,
        #[command(flatten)]
        format: crate::commands::args::Format,
    },
    /// Which configurations and version words the loader accepts FILE... under: each file
    /// under each --target (default: each file's own), as it is and with each --version word
    /// put in its place in memory (never written). Exit 0 when it ran, 2 usage or a missing
    /// driver.
    Compat {
        /// NBG files to judge against each target and version
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Configuration names or 0xPIDs.
        #[arg(long = "target", value_name = "T")]
        targets: Vec<String>,
        /// Version words to try (0x00010003, ...).
        #[arg(long = "version", value_name = "0xVERSION", value_parser = nbg_lab::word::parse)]
        versions: Vec<u32>,
        #[command(flatten)]
        format: crate::commands::args::Format,
    },
    /// Write the project's tiny ONNX models into the new folder DIR: the serializer controls'
    /// models, the NN capture sets' bases (static constants) and the models in a user's names.
    Models {
        #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
        out: PathBuf,
    },
    /// The driver child (internal): one request on stdin, the answer written to RESULT.
    #[command(hide = true)]
    Child { result: PathBuf },
}

pub(super) fn fail(e: &VendorError, json: bool) -> ExitCode {
    if json {
        print_json(&nbg_lab::report::json::value(
            &nbg_lab::report::simulator::ErrorDoc {
                error: nbg_lab::report::simulator::ErrorBody {
                    code: e.code(),
                    message: e.to_string(),
                },
            },
        ));
    } else {
        eprintln!("nbg: {}: {e}", e.code());
    }
    e.exit_status().into()
}

/// The installed driver and its configurations.
pub(super) fn setup() -> Result<(simulator::Sdk, Vec<simulator::Config>), VendorError> {
    let sdk = simulator::sdk::locate()?;
    let configs = simulator::configs(&sdk)?;
    Ok((sdk, configs))
}

/// The driver and the configuration `target` names, or the exit status saying why not.
pub(super) fn driver_for(
    target: &str,
    json: bool,
) -> Result<(simulator::Sdk, simulator::Config), ExitCode> {
    let (sdk, configs) = setup().map_err(|e| fail(&e, json))?;
    let config = simulator::targets::resolve(&configs, target)
        .map_err(|m| fail(&VendorError::Target(m), json))?
        .clone();
    Ok((sdk, config))
}

fn target_word(bytes: &[u8]) -> Option<u32> {
    nbg_lab::nbg::read::le32_at(bytes, nbg_lab::nbg::format::OFF_TARGET_WORD)
}

pub fn exec(command: Command) -> ExitCode {
    match command {
        Command::Child { result } => simulator::driver::child_main(&result),
        Command::Targets {
            file,
            format: Format { json },
        } => targets::targets(file.as_deref(), json),
        Command::Compile {
            model,
            target,
            out,
            name,
            replace: Replace { force },
            format: Format { json },
        } => compile::compile(&model, &target, &out, name.as_deref(), force, json),
        Command::Capture {
            a,
            b,
            target,
            out,
            format: Format { json },
        } => capture::capture(&a, &b, &target, &out, json),
        Command::Load {
            file,
            target,
            from_file,
            format: Format { json },
        } => load::load(&file, target.as_deref(), from_file, json),
        Command::Run {
            file,
            input,
            out,
            target,
            substitute,
            replace: Replace { force },
            format: Format { json },
        } => run::run(
            &file,
            &input,
            &out,
            run::Options {
                target: target.as_deref(),
                substitute: &substitute,
                force,
                json,
            },
        ),
        Command::Models { out } => controls::models(&out),
        Command::Controls { write } => controls::controls(write),
        Command::CaptureSets { write } => controls::capture_sets(write),
        Command::Agreement {
            corpus,
            format: Format { json },
        } => agreement::agreement(corpus.as_deref(), json),
        Command::Compat {
            files,
            targets,
            versions,
            format: Format { json },
        } => compat::compat(&files, &targets, &versions, json),
    }
}

/// The driver and the configuration `target` names, or the one `bytes`' target word selects.
fn file_driver(
    bytes: &[u8],
    target: Option<&str>,
) -> Result<(simulator::Sdk, simulator::Config), VendorError> {
    let (sdk, configs) = setup()?;
    let config = match target {
        Some(t) => simulator::targets::resolve(&configs, t).cloned(),
        None => {
            let pid = target_word(bytes).unwrap_or(0);
            simulator::targets::for_pid(&configs, pid)
                .cloned()
                .ok_or(format!(
                    "no configuration of the driver has the file's PID 0x{pid:x}; pass --target"
                ))
        }
    }
    .map_err(VendorError::Target)?;
    Ok((sdk, config))
}
