//! `nbg onnx audit|run|crosscheck|verify-fixtures` (and the hidden `engine-child`).

use super::args::{Format, Replace};
use super::{failed, plan_outputs, print, print_json, status, usage_error};
use nbg_lab::files::write_atomic;
use nbg_lab::onnx::run::{Engine, Mode};
use nbg_lab::onnx::{audit, crosscheck, fixtures, npz, policy, run};
use nbg_lab::report::{self, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Admission audit (creates no session): inventory, signature, typed I/O, placement with
    /// refusal reasons, partitions. A refused model exits 1 with {"error": {code, message}}.
    Audit {
        /// The ONNX model file
        model: PathBuf,
        #[command(flatten)]
        format: super::args::Format,
        /// Policy file (default: the committed policy, compiled into the binary).
        #[arg(long)]
        policy: Option<PathBuf>,
    },
    /// Run a model on a fixed input: cpu (one CPU session), hybrid (the simulated NPU of
    /// --target for a graph approved there, else one CPU session and zero NPU attempts), strict
    /// (the NPU only; refused before any session when the graph is not approved on --target).
    /// Writes OUT.npz (never overwrites) and, with --evidence, the run evidence.
    Run {
        /// The ONNX model file
        model: PathBuf,
        #[arg(long, value_enum)]
        mode: ModeArg,
        #[arg(long, value_name = "IN.npz")]
        input: PathBuf,
        #[arg(short = 'o', long, value_name = "OUT.npz")]
        output: PathBuf,
        #[command(flatten)]
        format: super::args::Format,
        /// Also write the run evidence; written together with OUT.npz or not at all.
        #[arg(long, value_name = "FILE")]
        evidence: Option<PathBuf>,
        /// Policy file (default: the committed policy, compiled into the binary).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// CPU engine: ort (ONNX Runtime, the oracle) or tract (the second opinion).
        #[arg(long, value_enum, default_value = "ort")]
        engine: EngineArg,
        #[command(flatten)]
        replace: super::args::Replace,
        /// The simulated NPU target (a configuration name or 0xPID) for hybrid and strict
        /// modes: a graph whose signature the policy approves on it (beside a passing
        /// qualification record) is compiled and run there, one attempt and, in hybrid mode,
        /// one CPU fallback on a construction or run failure. Without it nothing is placed on
        /// the NPU.
        #[arg(long)]
        target: Option<String>,
    },
    /// Run a model on both engines (ONNX Runtime and tract) and report, per output, the max
    /// absolute and relative difference and whether they agree within the stated tolerance.
    /// Exits 0 when every output agrees, 1 when one disagrees or an engine refuses.
    Crosscheck {
        /// The ONNX model file
        model: PathBuf,
        #[arg(long, value_name = "IN.npz")]
        input: PathBuf,
        #[command(flatten)]
        format: super::args::Format,
        #[arg(long)]
        policy: Option<PathBuf>,
    },
    /// Qualify MODEL's graph signature on the simulated target T: the audit, the compile (the
    /// project's lowering), a run of the NBG on the simulator and of the model on ONNX Runtime
    /// on the same inputs (each --input archive, or one deterministic set uniform over each
    /// input's stored range), every output compared within its stated tolerance (floats: 1 %
    /// of the reference's range; quantized: 2 steps). -o writes the record (deterministic,
    /// `nbg-qualification/1`): signature, driver pin, target, NBG SHA-256, each output's max
    /// absolute and relative error, the verdict. About 15-30 s per model. Exit 0 qualified, 1
    /// not qualified or refused, 2 usage or a missing driver or runtime.
    Qualify {
        /// The ONNX model file
        model: PathBuf,
        /// A configuration name, or 0xPID.
        #[arg(long)]
        target: String,
        /// An input set (repeatable): an .npz of the model's inputs.
        #[arg(long, value_name = "IN.npz")]
        input: Vec<PathBuf>,
        /// The shape of a generated input (repeatable, outermost first): fixes the symbolic
        /// dimensions of a model input when no --input is given.
        #[arg(long, value_name = "NAME=D,D,...", value_parser = parse_shape)]
        shape: Vec<(String, Vec<u64>)>,
        /// Write the qualification record.
        #[arg(
            short = 'o',
            long = "output",
            alias = "out",
            value_name = "RECORD.json"
        )]
        out: Option<PathBuf>,
        #[command(flatten)]
        replace: super::args::Replace,
        #[command(flatten)]
        format: super::args::Format,
        /// Policy file the audit runs under (default: the committed policy).
        #[arg(long)]
        policy: Option<PathBuf>,
    },
    /// Internal: one engine session in a child process under resource limits (started by
    /// `nbg onnx run`).
    #[command(hide = true)]
    EngineChild {
        #[arg(long, value_enum)]
        engine: EngineArg,
        /// The ONNX model file
        model: PathBuf,
        input: PathBuf,
        output: PathBuf,
    },
    /// Regenerate the ONNX fixtures in memory and compare them with onnx/fixtures/ byte for
    /// byte (--write rewrites them). Run from the project root.
    VerifyFixtures {
        #[arg(long)]
        write: bool,
    },
}

/// `--mode`: how a run treats the NPU.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ModeArg {
    /// One CPU session.
    Cpu,
    /// The NPU where a partition is eligible, else the CPU.
    Hybrid,
    /// The NPU only; refused before any session while none is eligible.
    Strict,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Cpu => Mode::Cpu,
            ModeArg::Hybrid => Mode::Hybrid,
            ModeArg::Strict => Mode::Strict,
        }
    }
}

/// `--engine`: the CPU engine (the child's `--engine` is its `Display`, these names).
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum EngineArg {
    /// ONNX Runtime, the oracle.
    Ort,
    /// tract, the second opinion.
    Tract,
}

impl From<EngineArg> for Engine {
    fn from(e: EngineArg) -> Engine {
        match e {
            EngineArg::Ort => Engine::Ort,
            EngineArg::Tract => Engine::Tract,
        }
    }
}

pub fn exec(command: Command) -> ExitCode {
    match command {
        Command::Audit {
            model,
            format: Format { json },
            policy,
        } => audit_cmd(&model, json, policy.as_deref()),
        Command::Run {
            model,
            mode,
            input,
            output,
            format: Format { json },
            evidence,
            policy,
            engine,
            replace: Replace { force },
            target,
        } => {
            let run = RunArgs {
                target: target.as_deref(),
                model: &model,
                mode: mode.into(),
                engine: engine.into(),
                input: &input,
                output: &output,
                json,
                evidence: evidence.as_deref(),
                policy: policy.as_deref(),
                force,
            };
            run_cmd(&run)
        }
        Command::EngineChild {
            engine,
            model,
            input,
            output,
        } => ExitCode::from(nbg_lab::onnx::isolate::child_main(
            engine.into(),
            &model,
            &input,
            &output,
        ) as u8),
        Command::Crosscheck {
            model,
            input,
            format: Format { json },
            policy,
        } => crosscheck_cmd(&model, &input, json, policy.as_deref()),
        Command::VerifyFixtures { write } => fixtures_cmd(write),
        Command::Qualify {
            model,
            target,
            input,
            shape,
            out,
            replace: Replace { force },
            format: Format { json },
            policy,
        } => qualify_cmd(&QualifyArgs {
            model: &model,
            target: &target,
            inputs: &input,
            shapes: &shape,
            out: out.as_deref(),
            force,
            json,
            policy: policy.as_deref(),
        }),
    }
}

/// `NAME=D,D,...`: a tensor's name and its dimensions.
fn parse_shape(s: &str) -> Result<(String, Vec<u64>), String> {
    let (name, dims) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("{s:?} is not NAME=D,D,..."))?;
    let dims = dims
        .split(',')
        .map(|d| d.trim().parse::<u64>().map_err(|e| format!("{d:?}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    if name.is_empty() || dims.is_empty() || dims.iter().any(|&d| d == 0 || d > 1 << 20) {
        return Err(format!("{s:?}: a name and dimensions from 1 to 1048576"));
    }
    Ok((name.to_string(), dims))
}

/// `nbg onnx qualify`'s arguments, parsed.
struct QualifyArgs<'a> {
    model: &'a Path,
    target: &'a str,
    inputs: &'a [PathBuf],
    shapes: &'a [(String, Vec<u64>)],
    out: Option<&'a Path>,
    force: bool,
    json: bool,
    policy: Option<&'a Path>,
}

fn qualify_cmd(args: &QualifyArgs<'_>) -> ExitCode {
    let json = args.json;
    let mut read_from = vec![args.model];
    read_from.extend(args.inputs.iter().map(PathBuf::as_path));
    read_from.extend(args.policy);
    let mut outputs = match plan_outputs(&read_from, args.force, &[args.out]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let (bytes, a, limits) = match admitted(args.model, args.policy) {
        Ok(x) => x,
        Err(stop) => return stop.exit(json),
    };
    let mut sets = Vec::with_capacity(args.inputs.len());
    for p in args.inputs {
        let archive = match nbg_lab::files::read_regular(p) {
            Ok(b) => b,
            Err(e) => return usage_error(e),
        };
        match npz::read_inputs(&archive, &a.inputs, limits.tensor_bytes) {
            Ok(t) => sets.push(t),
            Err(r) => return refused(&r, json, None),
        }
    }
    if let Err(code) = ort_ready() {
        return code;
    }
    let (sdk, config) = match super::simulator::driver_for(args.target, json) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return usage_error(format!("cannot find this executable: {e}")),
    };
    let mut engines = nbg_lab::onnx::isolate::ChildEngines::new(
        exe,
        run::Engine::Ort,
        nbg_lab::onnx::isolate::ChildLimits::default(),
    );
    let record = nbg_lab::simulator::qualify::qualify(
        &sdk,
        &config,
        &bytes,
        &a.signature,
        &sets,
        args.shapes,
        &mut engines,
    );
    let (record, _) = match record {
        Ok(r) => r,
        Err(e) => return super::simulator::fail(&e, json),
    };
    let text = nbg_lab::canonical::canonical(&json::value(&record));
    if let Some(out) = args.out
        && let Err(e) = outputs
            .stage(out, text.as_bytes())
            .and_then(|_| outputs.commit())
    {
        return usage_error(e);
    }
    if json {
        print_json(&json::value(&record));
    } else {
        print(&report::onnx::qualification(
            &args.model.display().to_string(),
            &record,
        ));
    }
    status(record.verdict == nbg_lab::simulator::qualify::Verdict::Qualified)
}

/// A refused model (or input): the refusal as JSON on stdout or as text on stderr; the exit
/// status follows from its code (1).
fn refused(r: &audit::Refusal, json: bool, execution: Option<serde_json::Value>) -> ExitCode {
    if json {
        print_json(&json::value(&json::Refused {
            error: r,
            execution,
        }));
    } else {
        eprintln!("error[{}]: {}", r.code, r.message);
    }
    r.code.exit_status().into()
}

/// Why a command stops before its main work: the exit status follows from the kind.
enum Stop {
    /// The model or its input was refused (exit 1).
    Refused(audit::Refusal),
    /// A usage or I/O problem, already reported (exit 2).
    Usage(ExitCode),
}

impl Stop {
    fn exit(self, json: bool) -> ExitCode {
        match self {
            Stop::Refused(r) => refused(&r, json, None),
            Stop::Usage(code) => code,
        }
    }
}

/// An unreadable model, said on stderr as a usage problem; the exit status follows from its
/// code (2).
fn unreadable(u: &audit::Unreadable) -> ExitCode {
    eprintln!("nbg: {u}");
    u.0.code.exit_status().into()
}

/// The admitted model: its bytes, its audit and the limits it was audited under.
type Admitted = (Vec<u8>, audit::Audit, audit::Limits);

fn admitted(model: &Path, policy_path: Option<&Path>) -> Result<Admitted, Stop> {
    admitted_on(model, policy_path, None)
}

/// `admitted`, placed for `target` (a configuration name; `None`: approvals on any target).
fn admitted_on(
    model: &Path,
    policy_path: Option<&Path>,
    target: Option<&str>,
) -> Result<Admitted, Stop> {
    let policy = policy::load_or_embedded(policy_path).map_err(|r| Stop::Usage(usage_error(r)))?;
    let limits = audit::Limits::default();
    let bytes = audit::read_model(model, &limits).map_err(|u| Stop::Usage(unreadable(&u)))?;
    let a = audit::audit_on(&bytes, &limits, &policy, target).map_err(Stop::Refused)?;
    Ok((bytes, a, limits))
}

fn audit_cmd(model: &Path, json: bool, policy_path: Option<&Path>) -> ExitCode {
    let a = match admitted(model, policy_path) {
        Ok((_, a, _)) => a,
        Err(stop) => return stop.exit(json),
    };
    if json {
        print_json(&json::value(&a));
    } else {
        print(&report::onnx::audit(&model.display().to_string(), &a));
    }
    ExitCode::SUCCESS
}

/// Audit the model (placed for `target`) and read its input archive; refusals are values,
/// usage errors exit 2.
fn prepared(
    model: &Path,
    input: &Path,
    policy_path: Option<&Path>,
    target: Option<&str>,
) -> Result<(Vec<u8>, audit::Audit, audit::Limits, Vec<npz::Tensor>), Stop> {
    let (bytes, a, limits) = admitted_on(model, policy_path, target)?;
    let archive = nbg_lab::files::read_regular(input).map_err(|e| Stop::Usage(usage_error(e)))?;
    let tensors =
        npz::read_inputs(&archive, &a.inputs, limits.tensor_bytes).map_err(Stop::Refused)?;
    Ok((bytes, a, limits, tensors))
}

/// ONNX Runtime must be loadable before a session is asked of it: a missing or mismatched
/// library is a set-up error that names how to install it; the exit status follows from its
/// code (2).
fn ort_ready() -> Result<(), ExitCode> {
    nbg_lab::onnx::ort_engine::environment()
        .map(|_| ())
        .map_err(|e| {
            let code = audit::RefusalCode::CpuEngineMissing;
            eprintln!("nbg: {code}: {e}");
            code.exit_status().into()
        })
}

/// `nbg onnx run`'s arguments, parsed.
struct RunArgs<'a> {
    model: &'a Path,
    mode: run::Mode,
    engine: run::Engine,
    input: &'a Path,
    output: &'a Path,
    json: bool,
    evidence: Option<&'a Path>,
    policy: Option<&'a Path>,
    force: bool,
    target: Option<&'a str>,
}

fn run_cmd(args: &RunArgs<'_>) -> ExitCode {
    let (model, output, json) = (args.model, args.output, args.json);
    // Both outputs are checked before any work and land together or not at all.
    let mut inputs = vec![model, args.input];
    inputs.extend(args.policy);
    let mut outputs = match plan_outputs(&inputs, args.force, &[Some(output), args.evidence]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    // A run places a graph on the NPU only on the target it names.
    let driver = match (args.target, args.mode) {
        (Some(t), run::Mode::Hybrid | run::Mode::Strict) => {
            match super::simulator::driver_for(t, json) {
                Ok(d) => Some(d),
                Err(code) => return code,
            }
        }
        _ => None,
    };
    let placed_on = driver.as_ref().map_or("", |(_, c)| c.name.as_str());
    let (bytes, a, limits, tensors) =
        match prepared(model, args.input, args.policy, Some(placed_on)) {
            Ok(x) => x,
            Err(stop) => return stop.exit(json),
        };
    if args.engine == run::Engine::Ort && args.mode != run::Mode::Strict {
        if let Err(code) = ort_ready() {
            return code;
        }
    }
    // The session runs in a child process under resource limits.
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return usage_error(format!("cannot find this executable: {e}")),
    };
    let mut engines = nbg_lab::onnx::isolate::ChildEngines::new(
        exe,
        args.engine,
        nbg_lab::onnx::isolate::ChildLimits::default(),
    );
    let result = match driver {
        Some((sdk, config)) => {
            let mut simulator = nbg_lab::simulator::npu::Simulator {
                sdk,
                config,
                cpu: &mut engines,
                inputs: a.inputs.iter().map(|v| v.name.clone()).collect(),
                outputs: a.outputs.iter().map(|v| v.name.clone()).collect(),
            };
            run::run(&a, &bytes, args.mode, &tensors, &limits, &mut simulator)
        }
        None => run::run(&a, &bytes, args.mode, &tensors, &limits, &mut engines),
    };
    let (report, out) = match result {
        Ok(x) => x,
        Err((ex, r)) => return refused(&r, json, Some(json::value(&ex))),
    };
    let value = json::value(&report);
    let written = outputs
        .stage(output, &out)
        .and_then(|_| match args.evidence {
            Some(path) => outputs.stage(path, nbg_lab::canonical::canonical(&value).as_bytes()),
            None => Ok(()),
        })
        .and_then(|_| outputs.commit());
    if let Err(e) = written {
        return usage_error(e);
    }
    if json {
        print_json(&value);
    } else {
        let (m, o) = (model.display().to_string(), output.display().to_string());
        print(&report::onnx::run(&m, &o, &report));
    }
    ExitCode::SUCCESS
}

fn crosscheck_cmd(model: &Path, input: &Path, json: bool, policy_path: Option<&Path>) -> ExitCode {
    let (bytes, a, limits, tensors) = match prepared(model, input, policy_path, None) {
        Ok(x) => x,
        Err(stop) => return stop.exit(json),
    };
    if let Err(code) = ort_ready() {
        return code;
    }
    // Both engines run in child processes under resource limits, as `onnx run` does.
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return usage_error(format!("cannot find this executable: {e}")),
    };
    let c = crosscheck::crosscheck(
        &a,
        &bytes,
        &tensors,
        &limits,
        crosscheck::Isolation::Child(&exe),
    );
    if json {
        print_json(&json::value(&c));
    } else {
        print(&report::onnx::crosscheck(&model.display().to_string(), &c));
    }
    status(c.verdict == crosscheck::Verdict::Agree)
}

fn fixtures_cmd(write: bool) -> ExitCode {
    let root = Path::new(".");
    if write {
        let dir = root.join(fixtures::DIR);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return usage_error(format!("{}: {e}", dir.display()));
        }
        let manifest = nbg_lab::canonical::canonical(&fixtures::manifest());
        for (name, _, bytes) in fixtures::all() {
            if let Err(e) = write_atomic(&dir.join(name), &bytes, true) {
                return usage_error(e);
            }
        }
        if let Err(e) = write_atomic(&dir.join("manifest.json"), manifest.as_bytes(), true) {
            return usage_error(e);
        }
    }
    let schemas = fixtures::verify_schemas(root);
    match &schemas {
        Ok(l) => print(&format!("{l}\n")),
        Err(e) => print(&format!("{e}\n")),
    }
    match fixtures::verify(root) {
        Ok(lines) if schemas.is_ok() => {
            for l in &lines {
                print(&format!("{l}\n"));
            }
            print(&format!("verified {} fixture files\n", lines.len()));
            ExitCode::SUCCESS
        }
        Ok(_) => failed(),
        Err(bad) => {
            for l in &bad {
                print(&format!("{l}\n"));
            }
            failed()
        }
    }
}
