//! `nbg vendor targets|compile|capture|capture-sets|load|controls|models`: the vendor's
//! simulator driver as a peer.

use super::{plan_outputs, print, print_json, usage_error};
use nbg_lab::NbgFamily as _;
use nbg_lab::simulator::{self, Image, LoadVerdict, VendorError};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Command {
    /// The configurations the driver carries (name, PID); with FILE, the one its target word
    /// selects.
    Targets {
        /// An NBG whose target word (offset 8) selects a configuration.
        file: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Admit MODEL.onnx with the ONNX audit, build it through OpenVX and have the driver save
    /// it as OUT.nb (float32 models as float16, QDQ models quantized). Exit 0 written, 1 the
    /// model or the driver refused, 2 usage or a missing driver.
    Compile {
        model: PathBuf,
        /// A configuration name, or 0xPID.
        #[arg(long)]
        target: String,
        #[arg(short, long, value_name = "OUT.nb")]
        out: PathBuf,
        /// The embedded network name (VIV_VX_NBG_NAME); the driver's default otherwise.
        #[arg(long)]
        name: Option<String>,
        /// Replace an existing OUT.nb.
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// Compile A twice (A1, A2) and B once into the new folder DIR with a differential.json
    /// naming the one source quantity that differs (refused when A and B differ in more) and
    /// the model's other Q/DQ parameters as context; each model's graph name is compiled in as
    /// the network name. Exit 0 written with A1 = A2, 1 refused or A1 != A2, 2 usage or a
    /// missing driver.
    Capture {
        a: PathBuf,
        b: PathBuf,
        #[arg(long)]
        target: String,
        #[arg(short, long, value_name = "DIR")]
        out: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Import FILE with the vendor's loader in a child process (from memory: the bytes are
    /// handed over on a pipe, never written): accepted with its parameters, or refused with
    /// its status; nbg's I/O records are compared with the loader's. Exit 0 when the loader
    /// accepts, nbg parses and their I/O agree; 1 when the loader refuses or crashes, nbg
    /// refuses, or the I/O differs; 2 usage or a missing driver.
    Load {
        file: PathBuf,
        /// A configuration name or 0xPID; the file's own target word by default.
        #[arg(long)]
        target: Option<String>,
        /// Import from the path (`vx_vivante_file`) instead of from memory.
        #[arg(long)]
        from_file: bool,
        #[arg(long)]
        json: bool,
    },
    /// Run FILE once on the simulator: loaded from memory in a child process, the inputs of
    /// IN.npz (named, shaped and typed as nbg's parse of FILE's input records says: the stored
    /// type as it is, or float32, converted to affine uint8/int8, dynamic fixed point, float16
    /// or bfloat16), the outputs converted back to float32 and written to OUT.npz. Files of
    /// versions 0x00020000-0x00020004 are handed to the driver with the version word read as
    /// 0x00020005, in memory only, and the report says so. One run of a board file takes 5-15
    /// s and about 0.4 GB. Exit 0 ran, 1 nbg refuses the file or the driver refuses, crashes or
    /// hangs, 2 usage (an input that does not match, with its name) or a missing driver.
    Run {
        file: PathBuf,
        /// The inputs: an .npz of arrays named as the file's inputs.
        #[arg(long, value_name = "IN.npz")]
        input: PathBuf,
        #[arg(short, long, value_name = "OUT.npz")]
        out: PathBuf,
        /// A configuration name or 0xPID; the file's own target word by default.
        #[arg(long)]
        target: Option<String>,
        /// Replace an existing OUT.npz.
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// controls/serializer: recompile every control (each model for eight targets) and compare
    /// with the committed files, or with --write regenerate them. Exit 0 identical or written,
    /// 1 a difference, 2 a missing driver.
    Controls {
        #[arg(long)]
        write: bool,
    },
    /// differentials/serializer: recompile every capture set (conv and add models on an
    /// NN-engine and a shader-only part, a Gemm + Relu on a part that runs the Relu as an NN
    /// command; one quantity changed per B; 87 compiles in one driver context per target and
    /// network name, A2 in another; about 50 s on 2 cores) and compare with the committed
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
        #[arg(long)]
        json: bool,
    },
    /// Which configurations and version words the loader accepts FILE... under: each file
    /// under each --target (default: each file's own), as it is and with each --version word
    /// put in its place in memory (never written). Exit 0 when it ran, 2 usage or a missing
    /// driver.
    Compat {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Configuration names or 0xPIDs.
        #[arg(long = "target", value_name = "T")]
        targets: Vec<String>,
        /// Version words to try (0x00010003, ...).
        #[arg(long = "version", value_name = "0xVERSION")]
        versions: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Write the project's tiny ONNX models into the new folder DIR.
    Models {
        #[arg(short, long, value_name = "DIR")]
        out: PathBuf,
    },
    /// The driver child (internal): one request on stdin, the answer written to RESULT.
    #[command(hide = true)]
    Child { result: PathBuf },
}

pub(super) fn fail(e: &VendorError, json: bool) -> ExitCode {
    if json {
        print_json(&json!({"error": {"code": e.code(), "message": e.to_string()}}));
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
        Command::Targets { file, json } => targets(file.as_deref(), json),
        Command::Compile {
            model,
            target,
            out,
            name,
            force,
            json,
        } => compile(&model, &target, &out, name.as_deref(), force, json),
        Command::Capture {
            a,
            b,
            target,
            out,
            json,
        } => capture(&a, &b, &target, &out, json),
        Command::Load {
            file,
            target,
            from_file,
            json,
        } => load(&file, target.as_deref(), from_file, json),
        Command::Run {
            file,
            input,
            out,
            target,
            force,
            json,
        } => run(&file, &input, &out, target.as_deref(), force, json),
        Command::Models { out } => models(&out),
        Command::Controls { write } => controls(write),
        Command::CaptureSets { write } => capture_sets(write),
        Command::Agreement { corpus, json } => agreement(corpus.as_deref(), json),
        Command::Compat {
            files,
            targets,
            versions,
            json,
        } => compat(&files, &targets, &versions, json),
    }
}

fn targets(file: Option<&Path>, json: bool) -> ExitCode {
    let (_, configs) = match setup() {
        Ok(s) => s,
        Err(e) => return fail(&e, json),
    };
    let selected = match file {
        Some(f) => {
            let bytes = match nbg_lab::files::read_regular(f) {
                Ok(b) => b,
                Err(e) => return usage_error(e),
            };
            let Some(pid) = target_word(&bytes) else {
                return usage_error(format!("{}: shorter than a header", f.display()));
            };
            Some((pid, simulator::targets::for_pid(&configs, pid).cloned()))
        }
        None => None,
    };
    if json {
        let mut doc = json!({ "configs": configs });
        if let Some((pid, c)) = &selected {
            doc["file_target"] = json!(format!("0x{pid:08x}"));
            doc["selected"] = json!(c);
        }
        print_json(&doc);
    } else {
        let mut text = String::new();
        match &selected {
            Some((pid, Some(c))) => text.push_str(&format!("target 0x{pid:08x}: {}\n", c.name)),
            Some((pid, None)) => text.push_str(&format!(
                "target 0x{pid:08x}: no configuration of the driver has this PID\n"
            )),
            None => {
                for c in &configs {
                    text.push_str(&format!("{:<48} 0x{:08x}\n", c.name, c.pid));
                }
                text.push_str(&format!("{} configurations\n", configs.len()));
            }
        }
        print(&text);
    }
    match selected {
        Some((_, None)) => super::failed(),
        _ => ExitCode::SUCCESS,
    }
}

fn compile(
    model: &Path,
    target: &str,
    out: &Path,
    name: Option<&str>,
    force: bool,
    json: bool,
) -> ExitCode {
    let mut outputs = match plan_outputs(&[model], force, &[Some(out)]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bytes = match nbg_lab::files::read_regular(model) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let (sdk, config) = match driver_for(target, json) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let compiled = match simulator::compile(&sdk, &config, &bytes, name) {
        Ok(c) => c,
        Err(e) => return fail(&e, json),
    };
    if let Err(e) = outputs
        .stage(out, &compiled.nbg)
        .and_then(|_| outputs.commit())
    {
        return usage_error(e);
    }
    let verdict = match nbg_lab::parse(&compiled.nbg) {
        Ok(_) => json!("valid"),
        Err(f) => json!({"code": f.code.to_string(), "offset": f.offset}),
    };
    if json {
        let mut doc = serde_json::to_value(&compiled).unwrap_or_default();
        doc["driver"] = sdk.to_json();
        doc["model"] = json!(model.display().to_string());
        doc["out"] = json!(out.display().to_string());
        doc["nbg_parse"] = verdict;
        print_json(&doc);
    } else {
        eprintln!(
            "wrote {} ({} bytes, version {}, sha256 {}) for {} in {:.1} s",
            out.display(),
            compiled.nbg_bytes,
            compiled.nbg_version,
            compiled.nbg_sha256,
            config.name,
            compiled.seconds
        );
    }
    ExitCode::SUCCESS
}

fn capture(a: &Path, b: &Path, target: &str, out: &Path, json: bool) -> ExitCode {
    let read = |p: &Path| nbg_lab::files::read_regular(p);
    let (ma, mb) = match (read(a), read(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return usage_error(e),
    };
    let quantity = match simulator::capture::difference(&ma, &mb) {
        Ok(q) => q,
        Err(m) => {
            eprintln!("nbg: capture-refused: {m}");
            return super::failed();
        }
    };
    // The folder is checked before the compiles, which take seconds each.
    if out.symlink_metadata().is_ok() {
        return usage_error(format!("{}: already exists", out.display()));
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            return usage_error(format!("{}: no such folder", parent.display()));
        }
    }
    let (sdk, config) = match driver_for(target, json) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let mut compiled = Vec::new();
    for m in [&ma, &ma, &mb] {
        let name = simulator::capture::graph_name(&prost_decode(m));
        match simulator::compile(
            &sdk,
            &config,
            m,
            Some(name.as_str()).filter(|n| !n.is_empty()),
        ) {
            Ok(c) => compiled.push(c),
            Err(e) => return fail(&e, json),
        }
    }
    let mut spec = simulator::capture::spec(&quantity, &compiled[0], &compiled[2], &config, &sdk);
    spec.context = simulator::capture::context(&ma)
        .into_iter()
        .filter(|(k, _)| *k != quantity.key)
        .collect();
    if let Err(e) = nbg_lab::lab::capture::write_set(
        &compiled[0].nbg,
        &compiled[1].nbg,
        &compiled[2].nbg,
        &spec,
        out,
    ) {
        return usage_error(e);
    }
    let a2_same = compiled[0].nbg == compiled[1].nbg;
    if json {
        print_json(&json!({
            "out": out.display().to_string(),
            "config": config,
            "quantity": quantity.key,
            "a1_sha256": compiled[0].nbg_sha256,
            "a2_sha256": compiled[1].nbg_sha256,
            "b_sha256": compiled[2].nbg_sha256,
            "a1_equals_a2": a2_same,
        }));
    } else {
        eprintln!(
            "wrote capture set {} ({}; A1 {} A2)",
            out.display(),
            quantity.key,
            if a2_same { "=" } else { "!=" }
        );
    }
    if a2_same {
        ExitCode::SUCCESS
    } else {
        super::failed()
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

fn run(
    file: &Path,
    input: &Path,
    out: &Path,
    target: Option<&str>,
    force: bool,
    json: bool,
) -> ExitCode {
    let mut outputs = match plan_outputs(&[file, input], force, &[Some(out)]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let read = |p: &Path| nbg_lab::files::read_regular(p);
    let (bytes, archive) = match (read(file), read(input)) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), _) | (_, Err(e)) => return usage_error(e),
    };
    let bounds = match simulator::run::Prepared::input_bound(&bytes) {
        Ok(b) => b,
        Err(e) => return fail(&e, json),
    };
    let tensors = nbg_lab::onnx::npz::read_bounded(&archive, |name| {
        bounds
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, max)| *max)
            .ok_or_else(|| {
                nbg_lab::onnx::refusal::Refusal::new(
                    nbg_lab::onnx::refusal::RefusalCode::TensorBoundary,
                    format!("{name:?}: the file has no input of that name (refused before it is inflated)"),
                )
            })
    });
    let tensors = match tensors {
        Ok(t) => t,
        Err(r) => {
            return fail(
                &VendorError::InputMismatch(format!("{}: {}", input.display(), r.message)),
                json,
            );
        }
    };
    let prepared = match simulator::run::Prepared::new(&bytes, &tensors) {
        Ok(p) => p,
        Err(e) => return fail(&e, json),
    };
    let (sdk, config) = match file_driver(&bytes, target) {
        Ok(d) => d,
        Err(e) => return fail(&e, json),
    };
    let ran = match simulator::run::run(&sdk, &config, &prepared) {
        Ok(r) => r,
        Err(e) => return fail(&e, json),
    };
    let done = matches!(ran.report.verdict, simulator::run::RunVerdict::Ran { .. });
    if done
        && let Err(e) = outputs
            .stage(out, &nbg_lab::onnx::npz::write(&ran.float))
            .and_then(|_| outputs.commit())
    {
        return usage_error(e);
    }
    let written = done.then(|| out.display().to_string());
    if json {
        let mut doc = serde_json::to_value(&ran.report).unwrap_or_default();
        doc["file"] = json!(file.display().to_string());
        doc["driver"] = sdk.to_json();
        doc["out"] = json!(written);
        print_json(&doc);
    } else {
        print(&nbg_lab::report::run::text(
            &file.display().to_string(),
            &ran.report,
            written.as_deref(),
        ));
    }
    if done {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn load(file: &Path, target: Option<&str>, from_file: bool, json: bool) -> ExitCode {
    let bytes = match nbg_lab::files::read_regular(file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let (sdk, config) = match file_driver(&bytes, target) {
        Ok(d) => d,
        Err(e) => return fail(&e, json),
    };
    let image = if from_file {
        Image::File(file)
    } else {
        Image::Memory(&bytes)
    };
    let (verdict, seconds) = match simulator::load(&sdk, &config, image) {
        Ok(v) => v,
        Err(e) => return fail(&e, json),
    };
    let parsed = nbg_lab::parse(&bytes);
    let (nbg_verdict, differences) = match (&parsed, &verdict) {
        (Ok(g), LoadVerdict::Accepted { parameters, .. }) => (
            json!("valid"),
            simulator::compare_io(g.inputs(), g.outputs(), parameters),
        ),
        (Ok(_), _) => (json!("valid"), vec![]),
        (Err(f), _) => (
            json!({"code": f.code.to_string(), "offset": f.offset}),
            vec![],
        ),
    };
    let accepted = matches!(verdict, LoadVerdict::Accepted { .. });
    if json {
        print_json(&json!({
            "file": file.display().to_string(),
            "config": config,
            "driver": sdk.to_json(),
            "loader": verdict,
            "seconds": seconds,
            "nbg": nbg_verdict,
            "io_differences": differences,
        }));
    } else {
        let mut t = format!("{} under {}: ", file.display(), config.name);
        match &verdict {
            LoadVerdict::Accepted {
                import_type,
                parameters,
            } => {
                t.push_str(&format!(
                    "accepted ({import_type}), {} parameters\n",
                    parameters.len()
                ));
                for (i, p) in parameters.iter().enumerate() {
                    t.push_str(&format!(
                        "  {i} {:<6} {:?} {} scale {:?} zero point {:?}\n",
                        p.direction,
                        p.dims.clone().unwrap_or_default(),
                        p.data_type.as_deref().unwrap_or("?"),
                        p.scale,
                        p.zero_point
                    ));
                }
            }
            LoadVerdict::Refused {
                step,
                status,
                status_name,
            } => t.push_str(&format!(
                "refused at {step}: status {status} ({status_name})\n"
            )),
            LoadVerdict::Crashed { failure } => t.push_str(&format!("crashed: {failure}\n")),
        }
        t.push_str(&format!("nbg: {nbg_verdict}\n"));
        for d in &differences {
            t.push_str(&format!("differs: {d}\n"));
        }
        print(&t);
    }
    if accepted && differences.is_empty() && parsed.is_ok() {
        ExitCode::SUCCESS
    } else {
        super::failed()
    }
}

/// nbg's I/O records of a parsed graph.
fn controls(write: bool) -> ExitCode {
    let (sdk, configs) = match setup() {
        Ok(s) => s,
        Err(e) => return fail(&e, false),
    };
    let root = nbg_lab::project::root();
    let start = std::time::Instant::now();
    if write {
        return match simulator::controls::write(&root, &sdk, &configs) {
            Ok(n) => {
                eprintln!(
                    "wrote {n} controls into {} in {:.0} s",
                    simulator::controls::DIR,
                    start.elapsed().as_secs_f64()
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e, false),
        };
    }
    match simulator::controls::verify(&root, &sdk, &configs) {
        Ok((n, problems)) if problems.is_empty() => {
            print(&format!(
                "{}: {n} controls recompiled byte-identically in {:.0} s\n",
                simulator::controls::DIR,
                start.elapsed().as_secs_f64()
            ));
            ExitCode::SUCCESS
        }
        Ok((_, problems)) => {
            print(&(problems.join("\n") + "\n"));
            super::failed()
        }
        Err(e) => fail(&e, false),
    }
}

/// A model already admitted by `capture::difference` (so it decodes).
fn prost_decode(m: &[u8]) -> nbg_lab::onnx::proto::ModelProto {
    use prost::Message as _;
    nbg_lab::onnx::proto::ModelProto::decode(m).unwrap_or_default()
}

fn capture_sets(write: bool) -> ExitCode {
    let (sdk, configs) = match setup() {
        Ok(s) => s,
        Err(e) => return fail(&e, false),
    };
    let root = nbg_lab::project::root();
    let start = std::time::Instant::now();
    let built = match simulator::capture_sets::build(&sdk, &configs, &mut |d| {
        eprintln!("  {d} ({:.0} s)", start.elapsed().as_secs_f64())
    }) {
        Ok(b) => b,
        Err(e) => return fail(&e, false),
    };
    let files = simulator::capture_sets::files(&sdk, &built);
    let dir = simulator::capture_sets::DIR;
    let seconds = start.elapsed().as_secs_f64();
    if write {
        return match simulator::capture_sets::write(&root, &files) {
            Ok(n) => {
                eprintln!(
                    "wrote {} capture sets ({n} files) into {dir} in {seconds:.0} s",
                    built.len()
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e, false),
        };
    }
    let problems = simulator::capture_sets::compare(&root, &files);
    if problems.is_empty() {
        print(&format!(
            "{dir}: {} capture sets recompiled byte-identically in {seconds:.0} s\n",
            built.len()
        ));
        ExitCode::SUCCESS
    } else {
        print(&(problems.join("\n") + "\n"));
        super::failed()
    }
}

fn models(out: &Path) -> ExitCode {
    let folder = match nbg_lab::output::new_dir(out) {
        Ok(f) => f,
        Err(e) => return usage_error(e),
    };
    for (name, _, bytes) in simulator::models::all() {
        let path = out.join(format!("{name}.onnx"));
        if let Err(e) = nbg_lab::files::write_atomic_with(&path, false, |w| w.write_all(&bytes)) {
            return usage_error(e);
        }
    }
    folder.keep();
    eprintln!(
        "wrote {} models into {}",
        simulator::models::all().len(),
        out.display()
    );
    ExitCode::SUCCESS
}

/// `nbg sweep FILE --vendor`: nbg's and the loader's verdicts on every flip.
pub fn sweep(
    file: &Path,
    target: Option<&str>,
    stride: u64,
    json: bool,
    svg: Option<&Path>,
    force: bool,
) -> ExitCode {
    let mut outputs = match plan_outputs(&[file], force, &[svg]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bytes = match nbg_lab::files::read_regular(file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let target = match target {
        Some(t) => t.to_string(),
        None => match target_word(&bytes) {
            Some(w) => format!("0x{w:x}"),
            None => return usage_error(format!("{}: no target word", file.display())),
        },
    };
    let (sdk, config) = match driver_for(&target, json) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let bar = if json {
        None
    } else {
        nbg_lab::progress::bar(0, nbg_lab::progress::Unit::Mutations)
    };
    let run = simulator::sweep::run(&bytes, &sdk, &config, stride, &mut |done, total| {
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    });
    nbg_lab::progress::clear(bar);
    let report = match run {
        Ok(r) => r,
        Err(simulator::sweep::SweepError::Invalid(f)) => return super::report_failure(&f, json),
        Err(simulator::sweep::SweepError::Vendor(e)) => return fail(&e, json),
    };
    if let Some(path) = svg {
        let title = format!(
            "vendor sweep of {} ({}, stride {})",
            file.display(),
            config.name,
            report.stride
        );
        let map = nbg_lab::report::svg::vendor_sweep_map(&title, bytes.len() as u64, &report);
        if let Err(e) = outputs
            .stage(path, map.as_bytes())
            .and_then(|_| outputs.commit())
        {
            return usage_error(e);
        }
    }
    if json {
        let mut v = serde_json::to_value(&report).unwrap_or_default();
        v["schema"] = json!(simulator::sweep::SCHEMA);
        print_json(&v);
    } else {
        print(&nbg_lab::report::text::vendor_sweep(
            &file.display().to_string(),
            &report,
        ));
    }
    let t = &report.total;
    super::status(t.loader_crashed == 0 && t.loader_hung == 0 && t.only_loader_refuses == 0)
}

fn agreement(corpus: Option<&Path>, json: bool) -> ExitCode {
    let (sdk, configs) = match setup() {
        Ok(s) => s,
        Err(e) => return fail(&e, json),
    };
    let root = nbg_lab::project::root();
    let files = simulator::agreement::files(&root, corpus);
    let rows = match simulator::agreement::run(&sdk, &configs, &files) {
        Ok(r) => r,
        Err(e) => return fail(&e, json),
    };
    let disagreements = rows.iter().filter(|r| r.disagree).count();
    if json {
        let unjudged = rows.iter().filter(|r| r.loader.is_none()).count();
        print_json(
            &json!({"rows": rows, "files": rows.len(), "disagreements": disagreements, "not_loaded": unjudged}),
        );
    } else {
        let mut s = String::new();
        for r in &rows {
            let loader = match &r.loader {
                None => "no configuration for its target".to_string(),
                Some(v) => serde_json::to_value(v)
                    .ok()
                    .map(|v| match (v["verdict"].as_str(), v["status"].as_i64()) {
                        (Some(k), Some(st)) => format!("{k} {st}"),
                        (Some(k), None) => k.to_string(),
                        _ => String::new(),
                    })
                    .unwrap_or_default(),
            };
            s.push_str(&format!(
                "{} {:<60} {} {} nbg {:<24} loader {}\n",
                if r.disagree { "!" } else { " " },
                r.file,
                r.version,
                r.target,
                r.nbg,
                loader
            ));
        }
        let unjudged = rows.iter().filter(|r| r.loader.is_none()).count();
        s.push_str(&format!(
            "{} files: {} judged by both, {} agree, {disagreements} disagree; {unjudged} not loaded (no configuration for their target)\n",
            rows.len(),
            rows.len() - unjudged,
            rows.len() - unjudged - disagreements
        ));
        print(&s);
    }
    super::status(disagreements == 0)
}

fn compat(files: &[PathBuf], targets: &[String], versions: &[String], json: bool) -> ExitCode {
    let (sdk, configs) = match setup() {
        Ok(s) => s,
        Err(e) => return fail(&e, json),
    };
    let mut versions_n = Vec::new();
    for v in versions {
        match u32::from_str_radix(v.trim_start_matches("0x"), 16) {
            Ok(n) => versions_n.push(n),
            Err(_) => return usage_error(format!("--version {v}: not a hex word")),
        }
    }
    let mut loaded = Vec::new();
    for f in files {
        match nbg_lab::files::read_regular(f) {
            Ok(b) => loaded.push((f.display().to_string(), b)),
            Err(e) => return usage_error(e),
        }
    }
    let mut chosen: Vec<&simulator::Config> = Vec::new();
    if targets.is_empty() {
        for (_, b) in &loaded {
            match target_word(b).and_then(|t| simulator::targets::for_pid(&configs, t)) {
                Some(c) if !chosen.iter().any(|x| x.name == c.name) => chosen.push(c),
                Some(_) => {}
                None => {
                    return fail(
                        &VendorError::Target(format!(
                            "no configuration for target 0x{:08x}",
                            target_word(b).unwrap_or(0)
                        )),
                        json,
                    );
                }
            }
        }
    }
    for t in targets {
        match simulator::targets::resolve(&configs, t) {
            Ok(c) => chosen.push(c),
            Err(m) => return fail(&VendorError::Target(m), json),
        }
    }
    let trials = match simulator::compat::run(&sdk, &chosen, &loaded, &versions_n) {
        Ok(t) => t,
        Err(e) => return fail(&e, json),
    };
    if json {
        print_json(&json!({"trials": trials}));
    } else {
        let mut s = String::new();
        for t in &trials {
            let v = serde_json::to_value(&t.loader).unwrap_or_default();
            s.push_str(&format!(
                "{:<56} version {} (own {}) target {} under {:<34} nbg {:<24} loader {} {}\n",
                t.file,
                t.version,
                t.own_version,
                t.own_target,
                t.config,
                t.nbg,
                v["verdict"].as_str().unwrap_or(""),
                v["status"]
                    .as_i64()
                    .map(|x| x.to_string())
                    .unwrap_or_default()
            ));
        }
        print(&s);
    }
    ExitCode::SUCCESS
}
