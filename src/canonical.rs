//! Canonical JSON text: sorted keys, two-space indent, trailing newline. Every evidence file,
//! inventory and capture spec the lab writes is in this form, so a rebuild compares byte for byte.

use serde_json::Value;

/// One generated file (evidence, an inventory, an export): its path relative to the project
/// root and its exact text. Generators return these; `verify-generated` compares them with the
/// committed files byte for byte.
pub struct Generated {
    /// Path of the file relative to the repository root.
    pub path: String,
    /// The file's exact bytes, as text.
    pub text: String,
}

/// Canonical text of a JSON value. `serde_json`'s map is ordered by key, so keys are sorted.
pub fn canonical(value: &Value) -> String {
    // A `Value` has only string keys and finite numbers, so printing it cannot fail.
    let mut s = serde_json::to_string_pretty(value).unwrap_or_default();
    s.push('\n');
    s
}

/// Names an enum's variants once: `as_str` gives each variant's stable name, and the enum
/// serializes (and displays, padded) as exactly that name, so JSON and text cannot disagree.
macro_rules! names {
    ($enum:ident { $($variant:ident => $name:literal,)* }) => {
        impl $enum {
            /// The variant's stable name, as serialized.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)*
                }
            }
        }

        impl std::fmt::Display for $enum {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl serde::Serialize for $enum {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}
pub(crate) use names;
