//! The operator schema table, generated from the pinned `onnx` package (`onnx/schemas.json`).

use super::*;

/// The generated table, compiled in.
pub const SCHEMAS_JSON: &str = include_str!("../../../onnx/schemas.json");
pub use crate::onnx::pins::SCHEMAS_PATH;
/// The script that regenerates the table from the pinned `onnx` package.
pub const SCHEMAS_GENERATOR: &str = "bench/onnx_schemas.py";

/// The operator schema table (`onnx/schemas.json`): every schema of the pinned `onnx`
/// package, sorted by (domain, name, since).
#[derive(Debug, Deserialize)]
pub struct Table {
    /// The table format, `nbg-onnx-operator-schemas/1`.
    pub schema: String,
    /// The `onnx` package version it was generated from.
    pub onnx: String,
    /// How many schemas it holds (must equal `operators.len()`).
    pub count: usize,
    /// The schemas.
    pub operators: Vec<Schema>,
}

/// One operator schema at one operator set version.
#[derive(Debug, Deserialize)]
pub struct Schema {
    /// The operator's domain (empty: the default ONNX domain).
    pub domain: String,
    /// The operator (`Conv`, `Relu`, ...).
    pub name: String,
    /// The operator set version this schema takes effect from.
    pub since: i64,
    /// Whether the schema is deprecated.
    pub deprecated: bool,
    /// The least and most inputs a node may have.
    pub inputs: [i64; 2],
    /// The least and most outputs a node may have.
    pub outputs: [i64; 2],
    /// (name, type string, single/optional/variadic, homogeneous)
    pub formal_inputs: Vec<(String, String, String, bool)>,
    /// The same, for the outputs.
    pub formal_outputs: Vec<(String, String, String, bool)>,
    /// (name, AttributeProto type, required)
    pub attributes: Vec<(String, i32, bool)>,
    /// Each type parameter (`T`, ...) with the type strings it may be, sorted.
    pub type_constraints: BTreeMap<String, Vec<String>>,
}

/// The compiled-in table, parsed on first use, or why it cannot be.
pub(super) static TABLE: OnceLock<Result<Table, OnnxError>> = OnceLock::new();

/// The parsed table (parsed once).
pub fn table() -> Result<&'static Table, OnnxError> {
    TABLE
        .get_or_init(|| {
            let t: Table = serde_json::from_str(SCHEMAS_JSON)
                .map_err(|e| OnnxError::SchemaTable(e.to_string()))?;
            if t.schema != "nbg-onnx-operator-schemas/1" || t.count != t.operators.len() {
                return Err(OnnxError::SchemaTableIncomplete);
            }
            Ok(t)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The schema table's facts `verify-fixtures` prints.
pub fn describe() -> Result<String, OnnxError> {
    let t = table()?;
    Ok(format!(
        "{SCHEMAS_PATH}: {} operator schemas generated from onnx {} by {SCHEMAS_GENERATOR}",
        t.count, t.onnx
    ))
}
