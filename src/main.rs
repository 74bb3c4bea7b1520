//! `nbg`: the command-line shell over the nbg-lab library. Human text and errors go to stderr
//! or stdout as documented; machine output (`--json`) goes to stdout only.

use clap::{Parser, Subcommand};
use nbg_lab::files::{read_regular, write_atomic};
use nbg_lab::image::NbgImage;
use nbg_lab::output::{self, Outputs};
use nbg_lab::parse::{Graph, IoRecord, NbgV1, NbgV2};
use nbg_lab::progress;
use nbg_lab::{Failure, crc_rules, parse, synth};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `println!` that exits with status 2 instead of panicking when stdout is closed (a pipe into
/// `head`, say).
macro_rules! out {
    ($($t:tt)*) => {
        if writeln!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(2);
        }
    };
}

/// `print!` with the same handling.
macro_rules! outp {
    ($($t:tt)*) => {
        if write!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(2);
        }
    };
}

/// Strict parser and byte-ownership lab for VeriSilicon/Vivante NPU network binary graphs.
///
/// Exit status: 0 success, 1 an invalid NBG (or a failed check), 2 usage or I/O problems.
#[derive(Parser)]
#[command(name = "nbg", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse one NBG strictly and print a summary, or the full JSON document with --json.
    Parse {
        file: PathBuf,
        /// One JSON document on stdout (errors as {"error": {code, offset, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Check NBG files: one line per file, `ok` or the failure code; exit 1 if any fails.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Evaluate the documented registry of CRC coverage hypotheses for each file's CRC field
    /// and print every hypothesis that reproduces the stored value.
    CrcExplain {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Build the byte-ownership ledger of one NBG: owners, views, totals per class and the
    /// lossless reconstruction result.
    Image {
        file: PathBuf,
        #[arg(long)]
        json: bool,
        /// Also write a byte map coloured by owner class (refuses to overwrite without --force).
        #[arg(long, value_name = "OUT.svg")]
        svg: Option<PathBuf>,
        /// Replace an existing output file (never an input of this run, never a non-regular file).
        #[arg(long)]
        force: bool,
    },
    /// Rebuild each file in memory from its ledger and print `exact` or the first differing
    /// offset; exit 1 on any mismatch or invalid file.
    Roundtrip {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write each exact reconstruction into DIR (an existing folder): only when every file
        /// is exact, all or nothing, never a changed image; existing files only with --force.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Replace an existing output file (never an input of this run, never a non-regular file).
        #[arg(long)]
        force: bool,
    },
    /// Compare two NBGs of the same family, owner by owner (also of different sizes or
    /// layouts): changed ranges named by section or table, record and field. Exit 0 when
    /// identical, 1 when they differ or a file is invalid.
    Diff {
        a: PathBuf,
        b: PathBuf,
        #[arg(long)]
        json: bool,
        /// Show each changed range with 16 bytes of context (coloured on a terminal).
        #[arg(long)]
        hexdump: bool,
    },
    /// Run a controlled serializer differential on a capture directory (A1.nb, A2.nb, B.nb,
    /// differential.json): prove A1 = A2, localize A-to-B changes, replay the source
    /// substitution in memory and compare with B. Exit 0 only when B is reproduced.
    Differential {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
        /// Write the report as canonical JSON to FILE (the only file ever written; an existing
        /// one only with --force, never a file of the capture set).
        #[arg(long, value_name = "FILE")]
        evidence: Option<PathBuf>,
        /// Replace an existing output file (never an input of this run, never a non-regular file).
        #[arg(long)]
        force: bool,
    },
    /// Write a synthetic capture set (A1.nb, A2.nb, B.nb, differential.json) into a new DIR.
    SynthDifferential {
        /// One of: dynaio-constant, dynaio-later-entry, dynaio-multi-byte, negative-outside-dynaio.
        #[arg(long)]
        name: String,
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Inventory a hash-pinned corpus config (nbg-corpus/1 or nbg-public-corpus/1): parse
    /// every file in parallel, verify pins, print canonical JSON (or write it with --out).
    /// Exit 1 when any file fails its pin or its parse; the inventory still completes.
    Inventory {
        config: PathBuf,
        /// Write the canonical inventory JSON here instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Also write the Markdown summary.
        #[arg(long, value_name = "FILE.md")]
        summary: Option<PathBuf>,
        /// Worker threads (default: the machine's parallelism; at most 64).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=nbg_lab::inventory::MAX_JOBS as i64))]
        jobs: Option<u16>,
        /// Replace an existing output file (never an input of this run, never a non-regular file).
        #[arg(long)]
        force: bool,
    },
    /// Rebuild every committed evidence file in memory and compare bytes; print a unified
    /// diff and exit 1 on any mismatch. Run from the project root.
    VerifyGenerated {
        /// Rewrite the evidence files instead of comparing them.
        #[arg(long)]
        write: bool,
    },
    /// The main job, on what the repository holds: round-trip every pinned control (synthetic
    /// v2 and public v1), replay every committed differential, inventory the controls, verify
    /// all evidence. Each --corpus adds an inventory of your own hash-pinned corpus. Exit 0
    /// when every step passes, 1 when one fails, 2 on a usage or config problem.
    Lab {
        /// A corpus config to inventory too (nbg-corpus/1 or nbg-public-corpus/1); repeatable.
        #[arg(long, value_name = "CONFIG")]
        corpus: Vec<PathBuf>,
        /// Write each added corpus's inventory (<config stem>.json and .md) into DIR, which
        /// must not exist yet; nothing is written without it.
        #[arg(long, value_name = "DIR", requires = "corpus")]
        out: Option<PathBuf>,
    },
    /// Write a synthetic corpus for benchmarks: FILES v2 graphs of about BYTES each plus an
    /// nbg-corpus/1 config, into a new DIR.
    SynthCorpus {
        /// Number of files, 1 to 100,000.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        files: u32,
        /// Approximate size of each file, 4 KiB to 4 GiB + 20,000 bytes (the coefficient table
        /// records sizes in 32 bits).
        #[arg(long, value_parser = clap::value_parser!(u64).range(4096..=nbg_lab::synth::MAX_BULK_BYTES))]
        bytes: u64,
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Flip every byte with the patterns 0x01, 0x80, 0xff in memory and parse again: each
    /// offset is detected (with the code), tolerated (its owner explains why) or undetected.
    /// Exit 0 when no offset is undetected, 1 otherwise.
    Sweep {
        file: PathBuf,
        #[arg(long)]
        json: bool,
        /// Also write a byte map of the three classes (refuses to overwrite without --force).
        #[arg(long, value_name = "OUT.svg")]
        svg: Option<PathBuf>,
        /// Replace an existing output file (never an input of this run, never a non-regular file).
        #[arg(long)]
        force: bool,
        /// Flip and parse every offset even in large files (no coverage-derived payload bytes).
        #[arg(long)]
        exhaustive: bool,
    },
    /// Write one self-contained HTML report: of one graph (FILE), of the diff of two graphs
    /// (A B) or of a capture set (--differential DIR). Refuses an existing OUT without --force
    /// and never writes onto an input. Exit 0 written, 1 an input is an invalid NBG, 2 usage/I/O.
    Report {
        /// One graph, or two graphs A and B to compare.
        #[arg(num_args = 0..=2)]
        files: Vec<PathBuf>,
        /// A capture directory (A1.nb, A2.nb, B.nb, differential.json) instead of files.
        #[arg(long, value_name = "DIR", conflicts_with = "files")]
        differential: Option<PathBuf>,
        #[arg(short, long, value_name = "OUT.html")]
        out: PathBuf,
        /// One graph only: add the mutation sweep's protection map.
        #[arg(long)]
        sweep: bool,
        /// Replace an existing OUT (never an input).
        #[arg(long)]
        force: bool,
    },
    /// ONNX admission audit, fail-closed CPU/hybrid/strict runs and fixtures.
    Onnx {
        #[command(subcommand)]
        command: OnnxCommand,
    },
    /// Write a deterministic synthetic control: a v2 profile, or a small v1 graph of a version
    /// the public corpus has no sample of (the seed does not affect v1 profiles).
    Synth {
        /// One of: erf-u8, ctc-like, zipformer-like, tail-gap, shuffled (v2);
        /// v1-0020-suffix-crc, v1-0030-whole-file-crc, v1-0009-no-crc (v1).
        #[arg(long)]
        profile: String,
        #[arg(long)]
        seed: u64,
        /// Output file (refuses to overwrite an existing one without --force).
        #[arg(short, long)]
        out: PathBuf,
        /// Replace an existing output file (never an input of this run, never a non-regular file).
        #[arg(long)]
        force: bool,
    },
}

#[derive(Subcommand)]
enum OnnxCommand {
    /// Admission audit (creates no session): inventory, signature, typed I/O, placement with
    /// refusal reasons, partitions. A refused model exits 1 with {"error": {code, message}}.
    Audit {
        model: PathBuf,
        #[arg(long)]
        json: bool,
        /// Policy file (default: the committed policy, compiled into the binary).
        #[arg(long)]
        policy: Option<PathBuf>,
    },
    /// Run a model on a fixed input: cpu (one CPU session), hybrid (zero NPU attempts while no
    /// partition is eligible), strict (refuses before any session). Writes OUT.npz (never
    /// overwrites) and, with --evidence, the run evidence.
    Run {
        model: PathBuf,
        #[arg(long, value_parser = ["cpu", "hybrid", "strict"])]
        mode: String,
        #[arg(long, value_name = "IN.npz")]
        input: PathBuf,
        #[arg(long, value_name = "OUT.npz")]
        output: PathBuf,
        #[arg(long)]
        json: bool,
        /// Also write the run evidence; written together with OUT.npz or not at all.
        #[arg(long, value_name = "FILE")]
        evidence: Option<PathBuf>,
        /// Policy file (default: the committed policy, compiled into the binary).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// CPU engine: ort (ONNX Runtime, the oracle) or tract (the second opinion).
        #[arg(long, value_parser = ["ort", "tract"], default_value = "ort")]
        engine: String,
        /// Replace existing output files (never the model, the input or the policy).
        #[arg(long)]
        force: bool,
    },
    /// Run a model on both engines (ONNX Runtime and tract) and report, per output, the max
    /// absolute and relative difference and whether they agree within the stated tolerance.
    /// Exits 0 when every output agrees, 1 when one disagrees or an engine refuses.
    Crosscheck {
        model: PathBuf,
        #[arg(long, value_name = "IN.npz")]
        input: PathBuf,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        policy: Option<PathBuf>,
    },
    /// Internal: one engine session in a child process under resource limits (started by
    /// `nbg onnx run`).
    #[command(hide = true)]
    EngineChild {
        #[arg(long, value_parser = ["ort", "tract"])]
        engine: String,
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Parse { file, json } => cmd_parse(&file, json),
        Command::Check { files } => cmd_check(&files),
        Command::CrcExplain { files, json } => cmd_crc_explain(&files, json),
        Command::Image {
            file,
            json,
            svg,
            force,
        } => cmd_image(&file, json, svg.as_deref(), force),
        Command::Roundtrip { files, out, force } => cmd_roundtrip(&files, out.as_deref(), force),
        Command::Diff {
            a,
            b,
            json,
            hexdump,
        } => cmd_diff(&a, &b, json, hexdump),
        Command::Differential {
            dir,
            json,
            evidence,
            force,
        } => cmd_differential(&dir, json, evidence.as_deref(), force),
        Command::SynthDifferential { name, out } => cmd_synth_differential(&name, &out),
        Command::Inventory {
            config,
            out,
            summary,
            jobs,
            force,
        } => cmd_inventory(
            &config,
            out.as_deref(),
            summary.as_deref(),
            jobs.map(usize::from),
            force,
        ),
        Command::VerifyGenerated { write } => cmd_verify_generated(write),
        Command::Lab { corpus, out } => cmd_lab(&corpus, out.as_deref()),
        Command::SynthCorpus { files, bytes, out } => cmd_synth_corpus(files, bytes, &out),
        Command::Sweep {
            file,
            json,
            svg,
            exhaustive,
            force,
        } => cmd_sweep(&file, json, svg.as_deref(), exhaustive, force),
        Command::Report {
            files,
            differential,
            out,
            sweep,
            force,
        } => cmd_report(files, differential, &out, sweep, force),
        Command::Onnx { command } => onnx_cli::run(command),
        Command::Synth {
            profile,
            seed,
            out,
            force,
        } => cmd_synth(&profile, seed, &out, force),
    }
}

/// Plan a run's outputs before any work: every path checked against the inputs, the other
/// outputs and what exists (see `nbg_lab::output`).
fn plan_outputs(
    inputs: &[&Path],
    force: bool,
    outputs: &[Option<&Path>],
) -> Result<Outputs, ExitCode> {
    let mut planned = Outputs::new(inputs, force);
    for path in outputs.iter().flatten() {
        planned.plan(path).map_err(usage_error)?;
    }
    Ok(planned)
}

fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("nbg: {message}");
    ExitCode::from(2)
}

fn print_json(value: &serde_json::Value) {
    out!(
        "{}",
        serde_json::to_string_pretty(value).expect("JSON value serializes")
    );
}

fn cmd_parse(file: &Path, json: bool) -> ExitCode {
    // Streamed: the structure first, the payload once, never the whole file in memory.
    let parsed = match nbg_lab::stream::parse_file(file, Default::default()) {
        Ok(p) => p,
        Err(e) => return usage_error(e),
    };
    match parsed {
        Ok(graph) => {
            if json {
                print_json(&graph.to_json());
            } else {
                outp!("{}", summary(&graph));
            }
            ExitCode::SUCCESS
        }
        Err(failure) => report_failure(&failure, json),
    }
}

fn report_failure(failure: &Failure, json: bool) -> ExitCode {
    if json {
        print_json(&failure.to_json());
    } else {
        eprintln!("{failure}");
    }
    ExitCode::from(1)
}

fn cmd_check(files: &[PathBuf]) -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for file in files {
        match nbg_lab::stream::parse_file(file, Default::default()) {
            Err(e) => {
                eprintln!("nbg: {e}");
                return ExitCode::from(2);
            }
            Ok(parsed) => match parsed {
                Ok(_) => out!("{}: ok", file.display()),
                Err(f) => {
                    out!("{}: {} at 0x{:x}", file.display(), f.code, f.offset);
                    status = ExitCode::from(1);
                }
            },
        }
    }
    status
}

fn cmd_crc_explain(files: &[PathBuf], json: bool) -> ExitCode {
    let mut reports = Vec::new();
    let mut status = ExitCode::SUCCESS;
    for file in files {
        let bytes = match read_regular(file) {
            Ok(b) => b,
            Err(e) => return usage_error(e),
        };
        let name = file.display().to_string();
        match parse(&bytes) {
            Ok(graph) => {
                let e = crc_rules::explain(&graph);
                if !json {
                    out!(
                        "{name}: {} field @0x{:x} stored 0x{:08x}; {} of {} hypotheses reproduce it",
                        e.format,
                        e.field_offset,
                        e.stored,
                        e.matches.len(),
                        e.hypotheses_evaluated
                    );
                    for h in &e.matches {
                        let show = |r: &[[u64; 2]]| {
                            r.iter()
                                .map(|x| format!("[0x{:x},0x{:x})", x[0], x[1]))
                                .collect::<Vec<_>>()
                                .join(" ")
                        };
                        let ranges = if h.ranges.len() > 6 {
                            format!("{} ranges", h.ranges.len())
                        } else {
                            show(&h.ranges)
                        };
                        let zeroed = if h.zeroed.is_empty() {
                            String::new()
                        } else if h.zeroed.len() > 4 {
                            format!(" zeroed {} words", h.zeroed.len())
                        } else {
                            format!(" zeroed {}", show(&h.zeroed))
                        };
                        out!("  {} {ranges}{zeroed}", h.rule);
                    }
                }
                let mut v = serde_json::to_value(&e).expect("explanation serializes");
                v["file"] = serde_json::Value::from(name);
                reports.push(v);
            }
            Err(f) => {
                status = ExitCode::from(1);
                if json {
                    let mut v = f.to_json();
                    v["file"] = serde_json::Value::from(name);
                    reports.push(v);
                } else {
                    eprintln!("{name}: {f}");
                }
            }
        }
    }
    if json {
        print_json(&serde_json::Value::Array(reports));
    }
    status
}

fn cmd_image(file: &Path, json: bool, svg: Option<&Path>, force: bool) -> ExitCode {
    let mut outputs = match plan_outputs(&[file], force, &[svg]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bytes = match read_regular(file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let image = match parse(&bytes).and_then(|g| NbgImage::new(&g)) {
        Ok(i) => i,
        Err(f) => return report_failure(&f, json),
    };
    let recon = image.reconstruction();
    if let Some(path) = svg {
        let spans: Vec<_> = image
            .owners()
            .iter()
            .map(|o| nbg_lab::report::svg::Span {
                start: o.start,
                end: o.end,
                class: o.class.as_str(),
                label: &o.label,
            })
            .collect();
        let title = format!("{} ({})", file.display(), image.format());
        let svg_text = nbg_lab::report::svg::byte_map(&title, image.len(), &spans, &OWNER_PALETTE);
        if let Err(e) = outputs
            .stage(path, svg_text.as_bytes())
            .and_then(|_| outputs.commit())
        {
            return usage_error(e);
        }
    }
    if json {
        print_json(&image.to_json());
    } else {
        out!(
            "{} ({}, {} bytes)",
            file.display(),
            image.format(),
            image.len()
        );
        out!(
            "  {:>10} {:>10} {:>10}  {:<17} label",
            "start",
            "end",
            "bytes",
            "class"
        );
        for o in image.owners() {
            let zero = match o.all_zero {
                Some(true) => " (all zero)",
                Some(false) => " (nonzero)",
                None => "",
            };
            out!(
                "  {:>#10x} {:>#10x} {:>10}  {:<17} {}{zero}",
                o.start,
                o.end,
                o.len(),
                o.class.as_str(),
                o.label
            );
        }
        out!("  views: {}", image.views().len());
        for v in image
            .views()
            .iter()
            .filter(|v| v.class != nbg_lab::image::ViewClass::NestedReference)
        {
            out!("    {:>#10x} {:>#10x}  {}", v.start, v.end, v.label);
        }
        out!("  totals:");
        for (class, bytes) in image.totals() {
            out!("    {class:<17} {bytes}");
        }
        match &recon {
            Ok(r) => out!(
                "  reconstruction: identical, {} bytes, sha256 {}",
                r.bytes,
                r.sha256
            ),
            Err(e) => out!("  reconstruction: {e}"),
        }
    }
    if recon.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Colours per owner class for byte maps.
const OWNER_PALETTE: [(&str, &str); 5] = [
    ("decoded-record", "#2b83ba"),
    ("alignment", "#fdae61"),
    ("padding", "#d7d7d7"),
    ("preserved-opaque", "#abdda4"),
    ("connection-tail", "#d7191c"),
];

fn cmd_roundtrip(files: &[PathBuf], out: Option<&Path>, force: bool) -> ExitCode {
    let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let mut outputs = Outputs::new(&inputs, force);
    if let Some(dir) = out {
        if !std::fs::symlink_metadata(dir)
            .map(|m| m.is_dir())
            .unwrap_or(false)
        {
            return usage_error(format!(
                "{}: --out must be an existing directory (not a symlink)",
                dir.display()
            ));
        }
        // Every target is checked (and two inputs with one name refused) before any work.
        for file in files {
            if let Err(e) = outputs.plan(&dir.join(file.file_name().unwrap_or_default())) {
                return usage_error(e);
            }
        }
    }
    let mut status = ExitCode::SUCCESS;
    for file in files {
        let bytes = match read_regular(file) {
            Ok(b) => b,
            Err(e) => return usage_error(e),
        };
        let name = file.display();
        let image = match parse(&bytes).and_then(|g| NbgImage::new(&g)) {
            Ok(i) => i,
            Err(f) => {
                out!("{name}: {} at 0x{:x}", f.code, f.offset);
                status = ExitCode::from(1);
                continue;
            }
        };
        match image.emit() {
            Ok(rebuilt) => {
                out!("{name}: exact");
                if let Some(dir) = out {
                    let target = dir.join(file.file_name().unwrap_or_default());
                    if let Err(e) = outputs.stage(&target, &rebuilt) {
                        return usage_error(e);
                    }
                }
            }
            Err(e) => {
                out!("{name}: {e}");
                status = ExitCode::from(1);
            }
        }
    }
    if out.is_some() {
        if status != ExitCode::SUCCESS {
            eprintln!("nbg: not every file is exact; nothing written");
        } else if let Err(e) = outputs.commit() {
            return usage_error(e);
        }
    }
    status
}

fn cmd_diff(a: &Path, b: &Path, json: bool, hexdump: bool) -> ExitCode {
    let (ba, bb) = match (read_regular(a), read_regular(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return usage_error(e),
    };
    let load = |bytes| parse(bytes).and_then(|g| NbgImage::new(&g).map(|i| (g, i)));
    let ((ga, ia), (gb, ib)) = match (load(&ba), load(&bb)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(f), _) => {
            eprintln!("{}: {f}", a.display());
            return ExitCode::from(1);
        }
        (_, Err(f)) => {
            eprintln!("{}: {f}", b.display());
            return ExitCode::from(1);
        }
    };
    let report = match nbg_lab::diff::diff(&ga, &ia, &gb, &ib) {
        Ok(r) => r,
        Err(e) => return usage_error(e.0),
    };
    if json {
        print_json(&serde_json::to_value(&report).expect("diff serializes"));
    } else {
        out!(
            "A {} ({} bytes)\nB {} ({} bytes)",
            a.display(),
            report.a.size,
            b.display(),
            report.b.size
        );
        if report.identical {
            out!("identical");
        } else {
            out!(
                "{} changed bytes in {} owners",
                report.changed_bytes,
                report.owners_changed
            );
            out!(
                "  {:<40} {:<16} {:<9} {:>10} {:>7}",
                "owner",
                "class",
                "status",
                "bytes",
                "ranges"
            );
            for o in &report.owners {
                let status = serde_json::to_value(&o.status)
                    .expect("status")
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                out!(
                    "  {:<40} {:<16} {:<9} {:>10} {:>7}",
                    o.owner,
                    o.class,
                    status,
                    o.changed_bytes,
                    o.ranges_total
                );
            }
        }
        if hexdump {
            let colour = std::io::IsTerminal::is_terminal(&std::io::stdout());
            for o in &report.owners {
                for c in &o.ranges {
                    out!(
                        "\n{} {} A[0x{:x}..0x{:x}) B[0x{:x}..0x{:x})",
                        o.owner,
                        c.field,
                        c.a_start,
                        c.a_end,
                        c.b_start,
                        c.b_end
                    );
                    outp!("{}", hex_context("A", &ba, c.a_start, c.a_end, colour));
                    outp!("{}", hex_context("B", &bb, c.b_start, c.b_end, colour));
                }
            }
        }
    }
    if report.identical {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Up to 64 changed bytes with 16 bytes of context either side, changed bytes highlighted.
fn hex_context(side: &str, bytes: &[u8], start: u64, end: u64, colour: bool) -> String {
    use std::fmt::Write;
    let end = end.min(start + 64);
    let from = start.saturating_sub(16) & !15;
    let to = (end + 16).min(bytes.len() as u64);
    let mut s = String::new();
    let mut row = from;
    while row < to {
        let _ = write!(s, "  {side} {row:08x}:");
        for o in row..(row + 16).min(to) {
            let b = bytes[o as usize];
            if (start..end).contains(&o) {
                if colour {
                    let _ = write!(s, " \x1b[1;31m{b:02x}\x1b[0m");
                } else {
                    let _ = write!(s, "[{b:02x}]");
                }
            } else {
                let _ = write!(s, " {b:02x}");
            }
        }
        s.push('\n');
        row += 16;
    }
    s
}

fn cmd_differential(dir: &Path, json: bool, evidence: Option<&Path>, force: bool) -> ExitCode {
    let mut outputs = match plan_outputs(&[dir], force, &[evidence]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let set = match nbg_lab::differential::load(dir) {
        Ok(s) => s,
        Err(e) => return usage_error(e),
    };
    let report = match nbg_lab::differential::run(&set) {
        Ok(r) => r,
        Err((f, which)) => {
            if json {
                let mut v = f.to_json();
                v["file"] = serde_json::Value::from(which);
                print_json(&v);
            } else {
                eprintln!("{which}: {f}");
            }
            return ExitCode::from(1);
        }
    };
    let value = serde_json::to_value(&report).expect("report serializes");
    if let Some(path) = evidence {
        let text = nbg_lab::evidence::canonical(&value);
        if let Err(e) = outputs
            .stage(path, text.as_bytes())
            .and_then(|_| outputs.commit())
        {
            return usage_error(e);
        }
    }
    if json {
        print_json(&value);
    } else {
        out!("capture {}", dir.display());
        out!("  a1 = a2        {}", report.a1_equals_a2);
        if let Some(same) = report.same_layout {
            out!("  same layout    {same}");
        }
        for d in &report.layout_differences {
            out!("    {d}");
        }
        const SHOWN: usize = 64;
        for r in report.changed_ranges.iter().take(SHOWN) {
            let entry = match (r.dynaio_entry, r.entry_offset, r.section_offset) {
                (Some(e), Some(o), Some(so)) => format!(" entry {e} +{o} (region +{so})"),
                _ => String::new(),
            };
            out!(
                "  changed [0x{:x}, 0x{:x}) {} {}{entry}",
                r.start,
                r.end,
                r.role,
                r.owner
            );
        }
        let more = report.changed_ranges.len().saturating_sub(SHOWN) as u64
            + report.changed_ranges_omitted;
        if more > 0 {
            out!(
                "  ... and {more} more changed ranges (--json lists the first {})",
                nbg_lab::differential::MAX_CHANGED_RANGES
            );
        }
        if let Some(s) = &report.source {
            out!(
                "  source         entry {} at 0x{:x} ({} bytes); differing indices {:?}; consistent {}",
                s.dynaio_entry,
                s.entry_file_offset,
                s.entry_size,
                s.differing_source_indices,
                s.consistent
            );
        }
        if let Some(r) = &report.replay {
            out!(
                "  replay         {} substitutions; crc recorded 0x{:08x} recomputed 0x{:08x} ({})",
                r.substitutions.len(),
                r.recorded_crc32,
                r.recomputed_crc32,
                r.crc_rule
            );
            out!("                 sha256 {} (B {})", r.sha256, r.b_sha256);
        }
        out!("  result         {}", report.result);
    }
    if report.reproduced() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn cmd_synth_differential(name: &str, out: &Path) -> ExitCode {
    let Some(trio) = synth::trio(name) else {
        return usage_error(format!(
            "unknown capture set {name:?}; known: {}",
            synth::TRIOS.join(", ")
        ));
    };
    let folder = match output::new_dir(out) {
        Ok(g) => g,
        Err(e) => return usage_error(e),
    };
    let spec = nbg_lab::differential::CaptureSpec {
        a_source: trio.a_source,
        b_source: trio.b_source,
        provenance: Some(trio.provenance),
    };
    let json = nbg_lab::evidence::canonical(&serde_json::to_value(&spec).expect("spec serializes"));
    for (file, bytes) in [
        ("A1.nb", &trio.a[..]),
        ("A2.nb", &trio.a[..]),
        ("B.nb", &trio.b[..]),
        ("differential.json", json.as_bytes()),
    ] {
        if let Err(e) = write_atomic(&out.join(file), bytes, false) {
            return usage_error(e);
        }
    }
    folder.keep();
    eprintln!("wrote capture set {name} into {}", out.display());
    ExitCode::SUCCESS
}

fn cmd_inventory(
    config: &Path,
    out: Option<&Path>,
    summary: Option<&Path>,
    jobs: Option<usize>,
    force: bool,
) -> ExitCode {
    let corpus = match nbg_lab::corpus::load(config) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    // The config and every corpus member are inputs: no output may replace one.
    let mut inputs: Vec<&Path> = vec![config];
    inputs.extend(corpus.entries.iter().map(|e| e.full_path.as_path()));
    let mut outputs = match plan_outputs(&inputs, force, &[out, summary]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bar = progress::bar(corpus.entries.len() as u64, progress::Unit::Files);
    let jobs = jobs.unwrap_or_else(nbg_lab::evidence::default_jobs);
    let mut results = nbg_lab::inventory::scan(&corpus, jobs, &|| progress::inc(&bar, 1));
    progress::clear(bar);
    let doc = nbg_lab::inventory::document_moving(&corpus, &mut results);
    let text = nbg_lab::evidence::canonical(&doc);
    let staged = out
        .map(|path| outputs.stage(path, text.as_bytes()))
        .unwrap_or(Ok(()))
        .and_then(|_| match summary {
            Some(path) => outputs.stage(path, nbg_lab::inventory::summary(&doc).as_bytes()),
            None => Ok(()),
        })
        .and_then(|_| outputs.commit());
    if let Err(e) = staged {
        return usage_error(e);
    }
    if out.is_none() {
        outp!("{text}");
    }
    for r in results.iter().filter(|r| !r.ok()) {
        let code = match &r.facts {
            Err((code, offset, _)) => format!("{code} at 0x{offset:x}"),
            Ok(_) => r.pin.to_string(),
        };
        eprintln!("{}: {code}", r.entry.path);
    }
    if nbg_lab::inventory::all_ok(&results) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn cmd_verify_generated(write: bool) -> ExitCode {
    let root = &nbg_lab::lab::project_root();
    if write {
        return match nbg_lab::evidence::write_all(root) {
            Ok(n) => {
                eprintln!("wrote {n} evidence files");
                ExitCode::SUCCESS
            }
            Err(e) => usage_error(e),
        };
    }
    match nbg_lab::evidence::verify(root) {
        Ok((n, mismatches)) if mismatches.is_empty() => {
            out!("{n} evidence files rebuilt; all identical");
            ExitCode::SUCCESS
        }
        Ok((n, mismatches)) => {
            for m in &mismatches {
                if m.missing {
                    out!("{}: missing (not committed)", m.path);
                } else {
                    outp!("{}: differs\n{}", m.path, m.diff);
                }
            }
            out!("{} of {n} evidence files differ", mismatches.len());
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("nbg: cannot rebuild evidence: {e}");
            ExitCode::from(1)
        }
    }
}

fn cmd_lab(configs: &[PathBuf], out: Option<&Path>) -> ExitCode {
    let mut corpora = Vec::new();
    for config in configs {
        match nbg_lab::corpus::load(config) {
            Ok(c) => corpora.push((config.display().to_string(), c)),
            Err(e) => return usage_error(e),
        }
    }
    if let Some(dir) = out {
        if std::fs::symlink_metadata(dir).is_ok() {
            return usage_error(format!("{}: already exists", dir.display()));
        }
    }
    let report = nbg_lab::lab::run(&nbg_lab::lab::project_root(), &corpora);
    for step in &report.steps {
        out!(
            "{:<28} {:<4} {:>4} items {:>8.2}s  {}",
            step.name,
            if step.passed { "pass" } else { "FAIL" },
            step.items,
            step.seconds,
            step.note
        );
        for row in step
            .rows
            .iter()
            .filter(|r| !r.passed || report.steps.len() < 2 || step.rows.len() <= 8)
        {
            out!(
                "    {:<4} {:<52} {}",
                if row.passed { "ok" } else { "FAIL" },
                row.item,
                row.detail
            );
        }
    }
    if let Some(dir) = out {
        let files: Vec<(&str, &[u8])> = report
            .inventories
            .iter()
            .map(|g| (g.path.as_str(), g.text.as_bytes()))
            .collect();
        if let Err(e) = output::write_new_dir(dir, &files) {
            return usage_error(e);
        }
        eprintln!(
            "wrote {} inventory files into {}",
            files.len(),
            dir.display()
        );
    }
    let failed = report.steps.iter().filter(|s| !s.passed).count();
    out!(
        "lab: {} steps, {} passed, {} failed",
        report.steps.len(),
        report.steps.len() - failed,
        failed
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn cmd_synth_corpus(files: u32, bytes: u64, out: &Path) -> ExitCode {
    let folder = match output::new_dir(out) {
        Ok(g) => g,
        Err(e) => return usage_error(e),
    };
    let mut entries = Vec::new();
    for i in 0..files {
        // Streamed: the payload is generated while it is written and hashed, never held.
        let (layout, generated) = synth::bulk_streamed(u64::from(i), bytes);
        let name = format!("bulk-{i:04}.nb");
        let mut digest = (nbg_lab::fingerprint::Hash256::default(), 0);
        let written = nbg_lab::files::write_atomic_with(&out.join(&name), false, |w| {
            let mut hashed = nbg_lab::fingerprint::HashingWriter::new(w);
            layout.write(&mut hashed, Some(&generated))?;
            digest = hashed.finish();
            Ok(())
        });
        if let Err(e) = written {
            return usage_error(e);
        }
        let (sha256, size) = digest;
        entries.push(serde_json::json!({
            "path": name,
            "role": "bulk",
            "sha256": sha256,
            "size": size,
        }));
    }
    let config = serde_json::json!({ "schema": "nbg-corpus/1", "files": entries });
    match write_atomic(
        &out.join("corpus.json"),
        nbg_lab::evidence::canonical(&config).as_bytes(),
        false,
    ) {
        Ok(()) => {
            folder.keep();
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(e),
    }
}

fn cmd_sweep(
    file: &Path,
    json: bool,
    svg: Option<&Path>,
    exhaustive: bool,
    force: bool,
) -> ExitCode {
    let mut outputs = match plan_outputs(&[file], force, &[svg]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bytes = match read_regular(file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let bar = if json {
        None
    } else {
        progress::bar(bytes.len() as u64, progress::Unit::Bytes)
    };
    let swept = nbg_lab::sweep::sweep_with_progress(
        &bytes,
        if exhaustive {
            u64::MAX
        } else {
            nbg_lab::sweep::EXHAUSTIVE_LIMIT
        },
        &|n| progress::inc(&bar, n),
    );
    progress::clear(bar);
    let (report, outcomes) = match swept {
        Ok(r) => r,
        Err(f) => return report_failure(&f, json),
    };
    if let Some(path) = svg {
        let mut spans = Vec::new();
        let mut start = 0usize;
        for i in 1..=outcomes.len() {
            if i == outcomes.len() || outcomes[i].class() != outcomes[start].class() {
                spans.push((start as u64, i as u64, outcomes[start].class()));
                start = i;
            }
        }
        let spans: Vec<_> = spans
            .iter()
            .map(|&(s, e, c)| nbg_lab::report::svg::Span {
                start: s,
                end: e,
                class: c,
                label: c,
            })
            .collect();
        let palette = [
            ("detected", "#1a9641"),
            ("tolerated", "#fdae61"),
            ("undetected", "#d7191c"),
        ];
        let title = format!("sweep of {} ({})", file.display(), report.format);
        let text = nbg_lab::report::svg::byte_map(&title, bytes.len() as u64, &spans, &palette);
        if let Err(e) = outputs
            .stage(path, text.as_bytes())
            .and_then(|_| outputs.commit())
        {
            return usage_error(e);
        }
    }
    if json {
        print_json(&serde_json::to_value(&report).expect("sweep report serializes"));
    } else {
        out!(
            "{} ({}, {} offsets x {} patterns): {} detected, {} tolerated, {} undetected",
            file.display(),
            report.format,
            report.offsets,
            report.patterns.len(),
            report.detected,
            report.tolerated,
            report.undetected
        );
        out!(
            "  {:<18} {:>10} {:>10} {:>10}",
            "owner class",
            "detected",
            "tolerated",
            "undetected"
        );
        for (class, c) in &report.by_owner {
            out!(
                "  {class:<18} {:>10} {:>10} {:>10}",
                c.detected,
                c.tolerated,
                c.undetected
            );
        }
        out!("  caught by:");
        for (code, n) in &report.by_code {
            out!("    {code:<32} {n}");
        }
        if !report.tolerated_reasons.is_empty() {
            out!("  tolerated because:");
            for (reason, n) in &report.tolerated_reasons {
                out!("    {n:>8}  {reason}");
            }
        }
        for (s, e, label) in &report.undetected_ranges {
            out!("  undetected [0x{s:x}, 0x{e:x}) {label}");
        }
        if report.derived_offsets > 0 {
            out!(
                "  {} offsets flipped and parsed; {} payload/gap offsets classified from checksum coverage (--exhaustive to flip them too)",
                report.exhaustive_offsets,
                report.derived_offsets
            );
        }
    }
    if report.undetected == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn cmd_report(
    mut files: Vec<PathBuf>,
    differential: Option<PathBuf>,
    out: &Path,
    sweep: bool,
    force: bool,
) -> ExitCode {
    use nbg_lab::report::{ReportError, Request};
    let request = match (differential, files.len(), sweep) {
        (Some(dir), 0, false) => Request::Capture { dir },
        (None, 1, _) => Request::Graph {
            file: files.remove(0),
            sweep,
        },
        (None, 2, false) => Request::Pair {
            b: files.remove(1),
            a: files.remove(0),
        },
        (_, _, true) => return usage_error("--sweep needs exactly one FILE"),
        _ => return usage_error("give FILE, A B, or --differential DIR"),
    };
    let written = request
        .render()
        .and_then(|html| nbg_lab::report::write(out, &html, &request.inputs(), force));
    match written {
        Ok(()) => {
            eprintln!("wrote {}", out.display());
            ExitCode::SUCCESS
        }
        Err(ReportError::Invalid(file, f)) => {
            eprintln!("{file}: {f}");
            ExitCode::from(1)
        }
        Err(e) => usage_error(e),
    }
}

fn cmd_synth(profile: &str, seed: u64, out: &Path, force: bool) -> ExitCode {
    let mut outputs = match plan_outputs(&[], force, &[Some(out)]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bytes = match synth::profile(profile, seed) {
        Some(layout) => layout.emit(),
        None => match nbg_lab::synth_v1::profile(profile) {
            Some(bytes) => bytes,
            None => {
                let v1 = nbg_lab::synth_v1::PROFILES.map(|p| p.0);
                return usage_error(format!(
                    "unknown profile {profile:?}; known: {}, {}",
                    synth::PROFILES.join(", "),
                    v1.join(", ")
                ));
            }
        },
    };
    match outputs.stage(out, &bytes).and_then(|_| outputs.commit()) {
        Ok(()) => {
            eprintln!("wrote {} ({} bytes)", out.display(), bytes.len());
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(e),
    }
}

fn summary(graph: &Graph<'_>) -> String {
    match graph {
        Graph::V1(g) => summary_v1(g),
        Graph::V2(g) => summary_v2(g),
    }
}

fn io_table(s: &mut String, title: &str, records: &[IoRecord]) {
    use std::fmt::Write;
    let _ = writeln!(s, "\n{title} ({}):", records.len());
    for r in records {
        let _ = writeln!(
            s,
            "  {:>3} {:<32} {:<8} {:?} {} bytes, quant {}",
            r.index,
            r.name.as_deref().unwrap_or("(unnamed)"),
            r.data_format_name.unwrap_or("unknown"),
            r.dimensions,
            r.storage_bytes.map_or("unknown".into(), |b| b.to_string()),
            r.quantization.format_name.unwrap_or("unknown"),
        );
    }
}

fn summary_v1(g: &NbgV1<'_>) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let h = &g.header;
    let _ = writeln!(s, "format     nbg-v1 (version 0x{:08x})", h.version);
    let _ = writeln!(
        s,
        "layout     {}",
        match g.layout {
            nbg_lab::format::v1::Layout::Known => "known (a version with evidence)",
            nbg_lab::format::v1::Layout::BoundedUnknown =>
                "bounded-unknown (newer than any version with evidence: public entries read, the rest opaque)",
        }
    );
    let _ = writeln!(s, "target     0x{:08x}", h.target);
    let _ = writeln!(
        s,
        "file       {} bytes, sha256 {}",
        g.file.size, g.file.sha256
    );
    let _ = writeln!(
        s,
        "network    {:?}: {} layers, {} operations",
        h.network_name, h.layer_count, h.operation_count
    );
    let fp = &g.fixed_part;
    let _ = writeln!(
        s,
        "fixed part {} bytes, {} entries ({} public{}), opaque extension {} bytes",
        fp.size,
        fp.entry_count,
        fp.public_entry_count,
        if fp.extension_entries.is_empty() {
            String::new()
        } else {
            format!(", extension: {}", fp.extension_entries.join(" "))
        },
        g.opaque_fixed_extension.size
    );
    let _ = writeln!(s, "\ntables ({}):", g.tables.len());
    let _ = writeln!(
        s,
        "  {:>3} {:<18} {:<9} {:>10} {:>10} {:>6} {:>7}",
        "#", "name", "evidence", "offset", "size", "record", "records"
    );
    for t in &g.tables {
        let _ = writeln!(
            s,
            "  {:>3} {:<18} {:<9} {:>#10x} {:>10} {:>6} {:>7}",
            t.index,
            t.name,
            t.evidence,
            t.offset,
            t.size,
            t.record_size.map_or("-".into(), |r| r.to_string()),
            t.record_count.map_or("-".into(), |r| r.to_string()),
        );
    }
    io_table(&mut s, "inputs", &g.inputs);
    io_table(&mut s, "outputs", &g.outputs);
    s.push_str(&g.records.summary());
    let _ = writeln!(s, "\nchecks:");
    let c = &g.crc;
    let _ = writeln!(
        s,
        "  crc field @0x{:x}  stored 0x{:08x}, whole-file-zeroed 0x{:08x}: {}{}",
        c.offset,
        c.stored,
        c.computed_whole_file_zeroed,
        c.classification,
        c.rule.as_ref().map_or(String::new(), |r| format!(" ({r})"))
    );
    for n in &g.nested_tables {
        let _ = writeln!(
            s,
            "  nested {} -> {}: {} entries in bounds",
            n.table, n.target, n.entry_count
        );
    }
    let r = &g.connection_region;
    let _ = writeln!(
        s,
        "  connection region 0x{:x}+{} sha256 {}",
        r.offset, r.size, r.sha256
    );
    let _ = writeln!(s, "  structural sig    {}", g.structural_signature);
    s
}

fn summary_v2(g: &NbgV2<'_>) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let h = &g.header;
    let _ = writeln!(s, "format     nbg-v2 (version 0x{:08x})", h.version);
    let _ = writeln!(s, "target     0x{:08x}", h.target);
    let _ = writeln!(
        s,
        "file       {} bytes, sha256 {}",
        g.file.size, g.file.sha256
    );
    if let Some(n) = &g.network_info {
        let _ = writeln!(
            s,
            "network    {:?}: {} layers, {} operations, {} cores",
            n.name, n.layer_count, n.operation_count, n.core_count
        );
    }
    let _ = writeln!(s, "\nsections ({}):", g.sections.len());
    let _ = writeln!(
        s,
        "  {:>3} {:>4}  {:<34} {:>10} {:>10} {:>5} {:>5}  crc32",
        "#", "type", "name", "offset", "size", "align", "entry"
    );
    for x in &g.sections {
        let _ = writeln!(
            s,
            "  {:>3} {:>4}  {:<34} {:>#10x} {:>10} {:>5} {:>5}  {:08x}",
            x.index,
            x.kind,
            x.type_name,
            x.offset,
            x.size,
            x.alignment,
            x.entry_size,
            x.fingerprint.crc32
        );
    }
    io_table(&mut s, "inputs", &g.inputs);
    io_table(&mut s, "outputs", &g.outputs);
    s.push_str(&g.records.summary());
    let c = &g.file_checksum;
    let _ = writeln!(s, "\nchecks:");
    let _ = writeln!(
        s,
        "  file crc32        0x{:08x} matches ({} section bytes, {} gap bytes excluded)",
        c.computed_crc32, c.covered_section_bytes, c.excluded_alignment_gap_bytes
    );
    let _ = writeln!(s, "  section checksums {} match", g.section_checksums.len());
    match &g.dynamic_io {
        Some(d) => {
            let _ = writeln!(
                s,
                "  dynamic io        {} entries, {} region bytes, {} padding (zero)",
                d.entry_count, d.region_bytes, d.padding_bytes
            );
        }
        None => {
            let _ = writeln!(s, "  dynamic io        absent");
        }
    }
    let r = &g.connection_region;
    let _ = writeln!(
        s,
        "  connection region 0x{:x}+{} sha256 {}{}",
        r.offset,
        r.size,
        r.sha256,
        if r.covered_by_section {
            " (covered by sections)"
        } else {
            ""
        }
    );
    let off: Vec<_> = g.corpus_invariants.iter().filter(|i| !i.holds).collect();
    let _ = writeln!(
        s,
        "  corpus invariants {} of {} hold (reported, not enforced)",
        g.corpus_invariants.len() - off.len(),
        g.corpus_invariants.len()
    );
    for i in off {
        let _ = writeln!(
            s,
            "    {}: expected {}, observed {}",
            i.name, i.expected, i.observed
        );
    }
    let _ = writeln!(s, "  structural sig    {}", g.structural_signature);
    s
}

mod onnx_cli {
    //! `nbg onnx ...`: thin shell over `nbg_lab::onnx`.

    use super::{OnnxCommand, plan_outputs, print_json, usage_error, write_atomic};
    use nbg_lab::onnx::{audit, crosscheck, fixtures, npz, policy, run};
    use std::io::Write as _;
    use std::path::Path;
    use std::process::ExitCode;

    fn refused(r: &audit::Refusal, json: bool, extra: Option<serde_json::Value>) -> ExitCode {
        if json {
            let mut v = r.to_json();
            if let Some(x) = extra {
                v["execution"] = x;
            }
            print_json(&v);
        } else {
            eprintln!("error[{}]: {}", r.code, r.message);
        }
        ExitCode::from(1)
    }

    pub fn run(command: OnnxCommand) -> ExitCode {
        match command {
            OnnxCommand::Audit {
                model,
                json,
                policy,
            } => audit_cmd(&model, json, policy.as_deref()),
            OnnxCommand::Run {
                model,
                mode,
                input,
                output,
                json,
                evidence,
                policy,
                engine,
                force,
            } => {
                let (Ok(mode), Ok(engine)) = (mode.parse(), engine.parse()) else {
                    return usage_error("clap restricts --mode and --engine");
                };
                run_cmd(
                    &model,
                    mode,
                    engine,
                    &input,
                    &output,
                    json,
                    evidence.as_deref(),
                    policy.as_deref(),
                    force,
                )
            }
            OnnxCommand::EngineChild {
                engine,
                model,
                input,
                output,
            } => {
                let Ok(engine) = engine.parse() else {
                    return usage_error("clap restricts --engine");
                };
                ExitCode::from(
                    nbg_lab::onnx::isolate::child_main(engine, &model, &input, &output) as u8,
                )
            }
            OnnxCommand::Crosscheck {
                model,
                input,
                json,
                policy,
            } => crosscheck_cmd(&model, &input, json, policy.as_deref()),
            OnnxCommand::VerifyFixtures { write } => fixtures_cmd(write),
        }
    }

    fn admitted(
        model: &Path,
        policy_path: Option<&Path>,
    ) -> Result<(Vec<u8>, audit::Audit, audit::Limits), Result<audit::Refusal, ExitCode>> {
        let policy = policy::load_or_embedded(policy_path).map_err(|r| Err(usage_error(r)))?;
        let limits = audit::Limits::default();
        let bytes = audit::read_model(model, &limits).map_err(|r| {
            if r.code == "ONNX_MODEL_UNREADABLE" {
                Err(usage_error(r))
            } else {
                Ok(r)
            }
        })?;
        let a = audit::audit(&bytes, &limits, &policy).map_err(Ok)?;
        Ok((bytes, a, limits))
    }

    fn audit_cmd(model: &Path, json: bool, policy_path: Option<&Path>) -> ExitCode {
        let a = match admitted(model, policy_path) {
            Ok((_, a, _)) => a,
            Err(Ok(r)) => return refused(&r, json, None),
            Err(Err(code)) => return code,
        };
        if json {
            print_json(&serde_json::to_value(&a).expect("audit serializes"));
            return ExitCode::SUCCESS;
        }
        let i = &a.inventory;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "{} ({} bytes, sha256 {})",
            model.display(),
            a.source.bytes,
            a.source.sha256
        );
        let _ = writeln!(out, "  signature  {}", a.signature);
        let _ = writeln!(
            out,
            "  inventory  {} graphs, depth {}, {} top-level + {} nested = {} nodes, {} initializers, {} attribute tensors, {} constant bytes",
            i.graphs,
            i.max_depth,
            i.top_level_nodes,
            i.nested_nodes,
            i.total_nodes,
            i.initializers,
            i.attribute_tensors,
            i.encoded_constant_bytes
        );
        for (side, values) in [("input ", &a.inputs), ("output", &a.outputs)] {
            for v in values {
                let _ = writeln!(
                    out,
                    "  {side}     {} {} {}",
                    v.name,
                    v.elem_type_name.unwrap_or(v.kind),
                    serde_json::to_string(&v.shape).unwrap_or_default()
                );
            }
        }
        for p in &a.placement {
            let _ = writeln!(
                out,
                "  node       {:<24} {:<12} {}  {}",
                p.node,
                p.op_type,
                p.placement,
                p.reasons.join(" ")
            );
        }
        for p in &a.partitions {
            let _ = writeln!(
                out,
                "  partition  {} {}: {} nodes, in {:?}, out {:?}",
                p.index,
                p.placement,
                p.nodes.len(),
                p.inputs,
                p.outputs
            );
        }
        ExitCode::SUCCESS
    }

    /// Audit the model and read its input archive; refusals are values, usage errors exit 2.
    fn prepared(
        model: &Path,
        input: &Path,
        json: bool,
        policy_path: Option<&Path>,
    ) -> Result<(Vec<u8>, audit::Audit, audit::Limits, Vec<npz::Tensor>), ExitCode> {
        let (bytes, a, limits) = match admitted(model, policy_path) {
            Ok(x) => x,
            Err(Ok(r)) => return Err(refused(&r, json, None)),
            Err(Err(code)) => return Err(code),
        };
        let archive = nbg_lab::files::read_regular(input).map_err(usage_error)?;
        let tensors =
            npz::read(&archive, limits.tensor_bytes).map_err(|r| refused(&r, json, None))?;
        Ok((bytes, a, limits, tensors))
    }

    /// ONNX Runtime must be loadable before a session is asked of it: a missing or mismatched
    /// library is a set-up error (exit 2) that names how to install it.
    fn ort_ready() -> Result<(), ExitCode> {
        nbg_lab::onnx::ort_engine::environment()
            .map(|_| ())
            .map_err(|e| usage_error(format!("CPU_ENGINE_MISSING: {e}")))
    }

    #[allow(clippy::too_many_arguments)]
    fn run_cmd(
        model: &Path,
        mode: run::Mode,
        engine: run::Engine,
        input: &Path,
        output: &Path,
        json: bool,
        evidence: Option<&Path>,
        policy_path: Option<&Path>,
        force: bool,
    ) -> ExitCode {
        // Both outputs are checked before any work and land together or not at all.
        let mut inputs = vec![model, input];
        inputs.extend(policy_path);
        let mut outputs = match plan_outputs(&inputs, force, &[Some(output), evidence]) {
            Ok(o) => o,
            Err(code) => return code,
        };
        let (bytes, a, limits, tensors) = match prepared(model, input, json, policy_path) {
            Ok(x) => x,
            Err(code) => return code,
        };
        if engine == run::Engine::Ort && mode != run::Mode::Strict {
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
            engine,
            nbg_lab::onnx::isolate::ChildLimits::default(),
        );
        let (report, out) = match run::run(&a, &bytes, mode, &tensors, &limits, &mut engines) {
            Ok(x) => x,
            Err((ex, r)) => {
                return refused(
                    &r,
                    json,
                    Some(serde_json::to_value(&ex).expect("serializes")),
                );
            }
        };
        let value = serde_json::to_value(&report).expect("report serializes");
        let written = outputs
            .stage(output, &out)
            .and_then(|_| match evidence {
                Some(path) => outputs.stage(path, nbg_lab::evidence::canonical(&value).as_bytes()),
                None => Ok(()),
            })
            .and_then(|_| outputs.commit());
        if let Err(e) = written {
            return usage_error(e);
        }
        if json {
            print_json(&value);
        } else {
            let mut o = std::io::stdout().lock();
            let _ = writeln!(
                o,
                "{} {}: {} (NPU attempts {}, CPU sessions {}) with {} {}",
                model.display(),
                report.mode,
                report.classification,
                report.npu_attempts,
                report.cpu_sessions,
                report.engine,
                report.engine_version
            );
            for t in &report.outputs {
                let _ = writeln!(
                    o,
                    "  output {} {} {:?} sha256 {}",
                    t.name, t.dtype, t.shape, t.sha256
                );
            }
            let _ = writeln!(
                o,
                "  wrote {} (sha256 {})",
                output.display(),
                report.output_npz_sha256
            );
        }
        ExitCode::SUCCESS
    }

    fn crosscheck_cmd(
        model: &Path,
        input: &Path,
        json: bool,
        policy_path: Option<&Path>,
    ) -> ExitCode {
        let (bytes, a, limits, tensors) = match prepared(model, input, json, policy_path) {
            Ok(x) => x,
            Err(code) => return code,
        };
        if let Err(code) = ort_ready() {
            return code;
        }
        let c = crosscheck::crosscheck(&a, &bytes, &tensors, &limits);
        let value = serde_json::to_value(&c).expect("crosscheck serializes");
        if json {
            print_json(&value);
        } else {
            let mut o = std::io::stdout().lock();
            let _ = writeln!(
                o,
                "{}: {} (tolerance: |ort - tract| <= {} + {} * |ort|)",
                model.display(),
                value["verdict"].as_str().unwrap_or_default(),
                c.tolerance.atol,
                c.tolerance.rtol
            );
            for (engine, r) in [("ort", &c.ort), ("tract", &c.tract)] {
                if let Some(e) = &r.error {
                    let _ = writeln!(o, "  {engine:<6} refused {}: {}", e.code, e.message);
                }
            }
            for d in &c.outputs {
                let _ = writeln!(
                    o,
                    "  output {:<20} max abs {:e} max rel {:e} {}",
                    d.name,
                    d.max_abs,
                    d.max_rel,
                    if d.agree { "agree" } else { "DISAGREE" }
                );
            }
        }
        if c.verdict == crosscheck::Verdict::Agree {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }

    fn fixtures_cmd(write: bool) -> ExitCode {
        let root = Path::new(".");
        if write {
            let dir = root.join(fixtures::DIR);
            if let Err(e) = std::fs::create_dir_all(&dir) {
                return usage_error(format!("{}: {e}", dir.display()));
            }
            let manifest = nbg_lab::evidence::canonical(&fixtures::manifest());
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
            Ok(l) => out!("{l}"),
            Err(e) => out!("{e}"),
        }
        match fixtures::verify(root) {
            Ok(lines) if schemas.is_ok() => {
                for l in &lines {
                    out!("{l}");
                }
                out!("verified {} fixture files", lines.len());
                ExitCode::SUCCESS
            }
            Ok(_) => ExitCode::from(1),
            Err(bad) => {
                for l in &bad {
                    out!("{l}");
                }
                ExitCode::from(1)
            }
        }
    }
}
