//! Argument groups the commands share (cargo's pattern: `#[command(flatten)]`), so each flag
//! is declared and documented once.

/// `--json`: one JSON document instead of text.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct Format {
    /// Print one JSON document on stdout instead of text (a failure as {"error": {code,
    /// message, ...}})
    #[arg(long)]
    pub json: bool,
}

/// `--force`: replace an existing output.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct Replace {
    /// Replace an existing output file (never an input of this run, never a non-regular
    /// file).
    #[arg(long)]
    pub force: bool,
}
