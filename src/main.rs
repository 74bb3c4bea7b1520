//! `nbg`: the command-line shell over the nbg-lab library. It parses the arguments, hands each
//! subcommand to its module under `commands/` (which calls the library and prints what
//! `nbg_lab::report` renders) and returns the exit status. Human text and errors go to stderr
//! or stdout as documented; machine output (`--json`) goes to stdout only.

mod commands;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use commands as cmd;
use std::process::ExitCode;

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
    Parse(cmd::parse::Args),
    /// Check NBG files
    ///
    /// One line per file, every file judged: `ok`, `ok (crc unexplained)` (a v1 CRC field no known
    /// rule reproduces; --strict refuses it) or the failure code; with --target and --runtime,
    /// whether each file loads on that device: `compatible`, `target-mismatch`,
    /// `version-newer-than-runtime` or `unknown`, with the values and a hint. Exit 0 when every
    /// file is valid (and compatible), 1 otherwise, 2 when an input could not be read (a folder, a
    /// symlink: its own `unreadable` line). With --json, one document: {"files": [...]}.
    Check(cmd::check::Args),
    /// What a board user asks first, one screen per file
    ///
    /// Format and version, target and the driver configurations with that PID, inputs and outputs
    /// (shape, type, scale, zero point, bytes), operations per engine, bytes by content (commands,
    /// coefficients, states and patches, I/O metadata, padding) and the CRC. Exit 0 all valid, 1 an
    /// invalid NBG. With --json, one document: {"files": [...]}, each file's answers or its error.
    Info(cmd::info::Args),
    /// Find every NBG embedded in IMAGE (firmware, archive, container)
    ///
    /// Each VPMN magic bounded by its declared size (v2) or its tables (v1), parsed strictly,
    /// listed with its offset, length and SHA-256 and (with -o) extracted when valid; near misses
    /// listed with their failure code, never extracted. Streamed in constant memory. Exit 0 when at
    /// least one valid NBG was found, 1 when none, 2 on a usage or I/O problem. With --json, the
    /// nbg-carve/1 document.
    Carve(cmd::carve::Args),
    /// Which CRC coverage rules reproduce each file's stored CRC
    ///
    /// Evaluates the documented registry of CRC coverage hypotheses for each file's CRC field
    /// and prints every hypothesis that reproduces the stored value.
    CrcExplain(cmd::crc_explain::Args),
    /// Build the byte-ownership ledger of one NBG
    ///
    /// Owners, views, totals per class and the lossless reconstruction result; --fields lists
    /// every decoded field with its value.
    Image(cmd::image::Args),
    /// Show the bytes of one owner, payload or OFFSET:LEN as a hex dump, or --raw
    ///
    /// An owner by its label as `nbg image` lists it, a payload by its name (a v2 section type, a
    /// v1 table), a range in decimal or 0x hex, shown with file offsets. A range needs no parse,
    /// so a damaged file dumps too.
    Dump(cmd::dump::Args),
    /// Rebuild each file from its ledger and re-encode every decoded record
    ///
    /// Prints `exact` or the first differing offset, then re-encodes every decoded record from
    /// its decoded values through the field map (`records: N re-encoded exactly`); exit 1 on any
    /// mismatch or invalid file.
    /// With --json, one document: per file the ledger result, `records_reencoded`, `records_total`.
    Roundtrip(cmd::roundtrip::Args),
    /// Resolve every patch record
    ///
    /// The field it relocates (a state value of a state buffer, a word of an NN or TP command, a
    /// word of a coefficient buffer) and what the address points to (an input or output, the memory
    /// pool or an SRAM, an entry of the coefficient, coefficient header or ICD table, the
    /// operation's own command). Counts per field, and each patch that names no field or source
    /// with the reason. Exit 0 when every file parses (unresolved patches are findings), 1 on an
    /// invalid file. With --json, one document: {"files": [...]}, each file's counts and every
    /// patch (`targets`: patch, owner, kind, field, source, transformation; an unresolved field or
    /// source as {"Err": reason}), or its error.
    Patches(cmd::patches::Args),
    /// Cut every coefficient entry of either family by what reads it, and decode it
    ///
    /// An NN buffer (VIP9000 class: a 64-byte header, one weight stream per NN core, biases; v7:
    /// the biases inline; VIP8000 class: a size table and zero-run streams) with its streams
    /// decoded (every code re-encoded to the same bits) and its kernels put together; a TP
    /// fully-connected buffer (zero-run or Huffman layout, one part per TP command); an image a
    /// shader's uniforms describe (type and shape from the descriptor); an NN table (PReLU
    /// post-multipliers, lookup table). What does not decode is reported with its code and offset
    /// or bit. Exit 0 when nothing is refused and every NN buffer's kernels are put together, 1
    /// when one is refused or not decoded or the file is invalid, 2 on an I/O problem. With --json,
    /// one document: {"file", "buffers", "zero_run", "tables", "images", "tp", "refused"}; each
    /// buffer with its entry, offset, size, the NN command and operation that read it, the decoded
    /// header, its streams (core, offset, bits, bytes, padding_zero, then decoded {codes, elements,
    /// runs, raw_escapes, dummy, reencoded} or not_decoded {code, bit, message}), its biases, and
    /// weights {dtype, layout, shape, zero_point, sha256, padding_zero, order} or weights_error
    /// {core, error}.
    Coefficients(cmd::coefficients::Args),
    /// Export the field map as JSON, a Kaitai Struct .ksy or a Markdown table
    ///
    /// Every record of both families, defined once in the library's `fieldmap` module, as
    /// canonical JSON, a Kaitai Struct .ksy (one family) or a Markdown table.
    Fieldmap(cmd::fieldmap::Args),
    /// Compare two NBGs of the same family, owner by owner (also of different sizes or layouts)
    ///
    /// Changed ranges named by section or table, record and field. Exit 0 when identical, 1 when
    /// they differ or a file is invalid.
    Diff(cmd::diff::Args),
    /// Run a controlled serializer differential on a capture directory (A1.nb, A2.nb, B.nb,
    /// differential.json)
    ///
    /// Prove A1 = A2, localize A-to-B changes, replay the source substitution in memory and compare
    /// with B. Exit 0 only when B is reproduced.
    Differential(cmd::differential::Args),
    /// Write a synthetic capture set (A1.nb, A2.nb, B.nb, differential.json) into a new DIR.
    SynthDifferential(cmd::synth_differential::Args),
    /// Field mappings as evidence: check a registry against capture sets, or promote one.
    Mapping {
        #[command(subcommand)]
        command: cmd::mapping::Command,
    },
    /// Find where a model's weights lie in an NBG, tensor by tensor
    ///
    /// Search each ONNX initializer (at least 8 elements) in the NBG's admitted sections under the
    /// finite transform registry; `found` (offsets, owner, transform) or `not-found`. For a v2
    /// graph, also match each source tensor (the ONNX float initializers, or every tensor of an
    /// .npz given instead of the model) to the kernels and biases the coefficient decoder puts
    /// together, with the layout, the quantization and the exact and consistent element counts.
    /// With --ops MODEL.ops.json (or --layers, the ONNX model's own graph), every NN command
    /// against the source layer its kernel pairs it with (input and output image, kernel size and
    /// depth, output channels), or accounted for by its output elements. Exit 0 when it ran and no
    /// paired command disagrees with its layer, 1 when one does, an invalid NBG or a refused model,
    /// 2 I/O or an operators file that does not read.
    #[cfg(feature = "onnx")]
    Locate(cmd::locate::Args),
    /// The vendor's x86-64 OpenVX simulator driver (installed by `bash .ci/setup`), run in a
    /// contained child process
    ///
    /// Its configurations, its serializer (compile, capture) and its loader (load, from memory by
    /// default).
    #[cfg(feature = "onnx")]
    Vendor {
        #[command(subcommand)]
        command: cmd::simulator::Command,
    },
    /// Inventory a hash-pinned corpus config (nbg-corpus/1 or nbg-public-corpus/1)
    ///
    /// Parse every file in parallel, verify pins, print canonical JSON (or write it with --out).
    /// Exit 1 when any file fails its pin or its parse; the inventory still completes.
    Inventory(cmd::inventory::Args),
    /// Rebuild every committed evidence file in memory and compare bytes; print a unified diff and
    /// exit 1 on any mismatch
    ///
    /// Run from the project root.
    VerifyGenerated(cmd::verify_generated::Args),
    /// The main job, on what the repository holds
    ///
    /// Round-trip every pinned control (synthetic v2 and public v1), replay every committed
    /// differential, inventory the controls, verify all evidence. Each --corpus adds an inventory
    /// of your own hash-pinned corpus. Exit 0 when every step passes, 1 when one fails, 2 on a
    /// usage or config problem.
    Lab(cmd::lab::Args),
    /// Write a synthetic corpus for benchmarks
    ///
    /// FILES v2 graphs of about BYTES each plus an nbg-corpus/1 config, into a new DIR.
    SynthCorpus(cmd::synth_corpus::Args),
    /// Flip every byte with the patterns 0x01, 0x80, 0xff in memory and parse again
    ///
    /// Each offset is detected (with the code), tolerated (its owner explains why) or undetected;
    /// the reparses' work is counted (flips parsed again, bytes read). Exit 0 when no offset is
    /// undetected, 1 otherwise.
    Sweep(cmd::sweep::Args),
    /// Write one self-contained HTML report
    ///
    /// Of one graph (FILE), of the diff of two graphs (A B) or of a capture set (--differential
    /// DIR). Refuses an existing OUT without --force and never writes onto an input. Exit 0
    /// written, 1 an input is an invalid NBG, 2 usage/I/O.
    Report(cmd::report::Args),
    /// ONNX admission audit, fail-closed CPU/hybrid/strict runs and fixtures.
    #[cfg(feature = "onnx")]
    Onnx {
        #[command(subcommand)]
        command: cmd::onnx::Command,
    },
    /// Write a deterministic synthetic control
    ///
    /// A v2 profile, or a small v1 graph of a version the public corpus has no sample of (the seed
    /// does not affect v1 profiles).
    Synth(cmd::synth::Args),
}

/// The commands as `nbg --help` groups them, by what a user came to do. A command in no group
/// is listed under "Other" (the test `every_command_is_in_one_help_group` keeps that empty).
const GROUPS: [(&str, &[&str]); 4] = [
    (
        "Board and deployment",
        &["check", "info", "vendor", "onnx", "carve", "report"],
    ),
    (
        "Reverse engineering",
        &[
            "parse",
            "image",
            "dump",
            "diff",
            "locate",
            "patches",
            "coefficients",
            "fieldmap",
            "crc-explain",
            "roundtrip",
            "sweep",
        ],
    ),
    (
        "Captures and field mappings",
        &["differential", "synth-differential", "mapping"],
    ),
    (
        "Lab upkeep",
        &[
            "lab",
            "inventory",
            "verify-generated",
            "synth",
            "synth-corpus",
        ],
    ),
];

/// `cli` with its command list grouped (`GROUPS`) in the help, each command beside its short
/// summary.
fn grouped(cli: clap::Command) -> clap::Command {
    let shown: Vec<(String, String)> = cli
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| {
            let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
            (c.get_name().to_string(), about)
        })
        .collect();
    let width = shown.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let line = |(n, a): &(String, String)| format!("  {n:<width$}  {a}\n");
    let mut list = String::new();
    for (title, names) in GROUPS {
        list.push_str(&format!("{title}:\n"));
        for n in names {
            shown
                .iter()
                .filter(|(s, _)| s == n)
                .for_each(|c| list.push_str(&line(c)));
        }
        list.push('\n');
    }
    let other: Vec<&(String, String)> = shown
        .iter()
        .filter(|(n, _)| !GROUPS.iter().any(|(_, g)| g.contains(&n.as_str())))
        .collect();
    if !other.is_empty() {
        list.push_str("Other:\n");
        other.into_iter().for_each(|c| list.push_str(&line(c)));
        list.push('\n');
    }
    cli.help_template(format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{list}Options:\n{{options}}{{after-help}}"
    ))
}

fn main() -> ExitCode {
    let matches = grouped(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match cli.command {
        Command::Parse(a) => cmd::parse::exec(a),
        Command::Check(a) => cmd::check::exec(a),
        Command::Info(a) => cmd::info::exec(a),
        Command::Carve(a) => cmd::carve::exec(a),
        Command::CrcExplain(a) => cmd::crc_explain::exec(a),
        Command::Image(a) => cmd::image::exec(a),
        Command::Dump(a) => cmd::dump::exec(a),
        Command::Roundtrip(a) => cmd::roundtrip::exec(a),
        Command::Patches(a) => cmd::patches::exec(a),
        Command::Coefficients(a) => cmd::coefficients::exec(a),
        Command::Fieldmap(a) => cmd::fieldmap::exec(a),
        Command::Diff(a) => cmd::diff::exec(a),
        Command::Differential(a) => cmd::differential::exec(a),
        Command::SynthDifferential(a) => cmd::synth_differential::exec(a),
        Command::Mapping { command } => cmd::mapping::exec(command),
        #[cfg(feature = "onnx")]
        Command::Locate(a) => cmd::locate::exec(a),
        #[cfg(feature = "onnx")]
        Command::Vendor { command } => cmd::simulator::exec(command),
        Command::Inventory(a) => cmd::inventory::exec(a),
        Command::VerifyGenerated(a) => cmd::verify_generated::exec(a),
        Command::Lab(a) => cmd::lab::exec(a),
        Command::SynthCorpus(a) => cmd::synth_corpus::exec(a),
        Command::Sweep(a) => cmd::sweep::exec(a),
        Command::Report(a) => cmd::report::exec(a),
        #[cfg(feature = "onnx")]
        Command::Onnx { command } => cmd::onnx::exec(command),
        Command::Synth(a) => cmd::synth::exec(a),
    }
}
