//! Progress bars for commands that can run longer than a second: on stderr, and only when
//! stderr is a terminal, so piped, logged and `--json` output never contain one.

use indicatif::{ProgressBar, ProgressStyle};

/// What a bar counts.
#[derive(Clone, Copy, Debug)]
pub enum Unit {
    /// Counts files.
    Files,
    /// Counts bytes.
    Bytes,
    /// Counts mutated images.
    Mutations,
}

/// A bar of `len` units, or `None` when stderr is not a terminal.
pub fn bar(len: u64, unit: Unit) -> Option<ProgressBar> {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return None;
    }
    let template = match unit {
        Unit::Files => "{bar:40} {pos}/{len} files {elapsed}",
        Unit::Bytes => "{bar:40} {bytes}/{total_bytes} {elapsed} (eta {eta})",
        Unit::Mutations => "{bar:40} {pos}/{len} mutations {elapsed} (eta {eta})",
    };
    let b = ProgressBar::new(len);
    // Invariant: the templates are constants of this module and parse.
    b.set_style(ProgressStyle::with_template(template).expect("valid template"));
    Some(b)
}

/// Advance an optional bar.
pub fn inc(bar: &Option<ProgressBar>, n: u64) {
    if let Some(b) = bar {
        b.inc(n);
    }
}

/// Remove an optional bar from the terminal.
pub fn clear(bar: Option<ProgressBar>) {
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}
