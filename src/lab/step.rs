//! What `nbg lab` reports: its rows, steps and the whole run, as data. The steps themselves run
//! in `evidence::steps`, above the report renderers; these types sit here, below them, so the
//! text renderer (`report::text::lab_steps`) reads them without importing what runs them.

/// One checked item of a step.
pub struct Row {
    /// What was checked.
    pub item: String,
    /// Whether it passed.
    pub passed: bool,
    /// What was found.
    pub detail: String,
}

/// One step of `nbg lab`: a group of checks with its timing.
pub struct Step {
    /// The step's name.
    pub name: String,
    /// Whether every item passed.
    pub passed: bool,
    /// Items checked.
    pub items: usize,
    /// Wall time of the step.
    pub seconds: f64,
    /// A note (a skip reason, a summary).
    pub note: String,
    /// The items.
    pub rows: Vec<Row>,
}

/// Every step of one `nbg lab` run.
pub struct Report {
    /// The steps, in run order.
    pub steps: Vec<Step>,
    /// The inventory JSON and Markdown summary of every added corpus, in the order given, named
    /// `<config stem>.json` / `.md` (with `-2`, `-3`... when two configs share a stem).
    pub inventories: Vec<crate::canonical::Generated>,
}
