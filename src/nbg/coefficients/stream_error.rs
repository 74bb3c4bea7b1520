//! Why a coefficient stream does not decode: a stable code and the bit of the stream where
//! the decoder stopped.

use serde::Serialize;

/// A stream that does not decode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StreamError {
    /// Stable kebab-case code.
    pub code: StreamCode,
    /// Bit offset inside the stream.
    pub bit: u64,
    /// What the decoder met there.
    pub message: String,
}

/// The reasons a stream does not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StreamCode {
    /// A code runs past `stream_size`, or the codes end before it.
    CoefStreamOverrun,
    /// The stream does not end with the encoder's flush (two pairs of first parts 000 or 100).
    CoefStreamFlush,
    /// `run_length_size` is none of the sizes the vendor's encoder writes (0, 4, 6, 10, 18).
    CoefRunTableSize,
    /// A symbol of `symbol_map` names a size class the code mode has not.
    CoefSymbolClass,
    /// A run names a run-table entry past `run_length_size`.
    CoefRunIndex,
    /// A code re-encodes to other bits than it was read from.
    CoefCodeNotCanonical,
    /// The stream's first element is not the kernel count the layout gives its core.
    CoefKernelCount,
    /// The stream holds more or fewer elements than its core's kernels take.
    CoefElementCount,
    /// The buffer has no NN command to give its layout (channels, kernel size, group).
    CoefNoLayout,
    /// The NN command's kernel type is none the decoder knows, or disagrees with the header.
    CoefKernelType,
    /// The stream's elements are counted and checked, but their order over the kernels is one
    /// the decoder does not put together (the v7 layout with inline biases).
    CoefKernelOrder,
}

impl StreamCode {
    /// The code as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamCode::CoefStreamOverrun => "coef-stream-overrun",
            StreamCode::CoefStreamFlush => "coef-stream-flush",
            StreamCode::CoefRunTableSize => "coef-run-table-size",
            StreamCode::CoefSymbolClass => "coef-symbol-class",
            StreamCode::CoefRunIndex => "coef-run-index",
            StreamCode::CoefCodeNotCanonical => "coef-code-not-canonical",
            StreamCode::CoefKernelCount => "coef-kernel-count",
            StreamCode::CoefElementCount => "coef-element-count",
            StreamCode::CoefNoLayout => "coef-no-layout",
            StreamCode::CoefKernelType => "coef-kernel-type",
            StreamCode::CoefKernelOrder => "coef-kernel-order",
        }
    }
}

impl StreamError {
    /// An error `code` at `bit`.
    pub fn new(code: StreamCode, bit: u64, message: impl Into<String>) -> StreamError {
        StreamError {
            code,
            bit,
            message: message.into(),
        }
    }
}
