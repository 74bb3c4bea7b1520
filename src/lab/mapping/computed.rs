//! Values a serializer computes from several source quantities (a requantization factor from
//! the input, weight and output scales; a zero-point product): a finite, recorded set of
//! candidate formulas per target. A capture set keeps the candidates whose A value is A's bytes
//! and whose B value is B's bytes at the target, and refutes the rest; promotion keeps the one
//! candidate every proving capture set keeps.

use super::{Encoding, Quantity, Reason, Target, Value, encode};
use serde::{Deserialize, Serialize};

/// Most inputs one computed value reads.
pub const MAX_INPUTS: usize = 8;
/// Most candidate formulas one computed value tries.
pub const MAX_CANDIDATES: usize = 16;

/// How a candidate combines its inputs `x0 .. xn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// `x0 * x1 * ... * xn`.
    Product,
    /// `x0 * ... * x(n-1) / xn`.
    Ratio,
    /// `xn / (x0 * ... * x(n-1))`.
    InverseRatio,
}

/// A part of the computed number that is written instead of the number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// The biased exponent (bits 23..30) of the number as an f32: a power-of-two shift.
    F32Exponent,
}

fn one() -> i64 {
    1
}

fn is_one(v: &i64) -> bool {
    *v == 1
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// One candidate formula: `factor * op(inputs) + offset`, computed in f64, then (with `part`)
/// reduced to a part of its f32, then written in the target's encoding (a float rounded to f32
/// first, as a serializer computing in f32 would).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    /// How the inputs combine.
    pub op: Op,
    /// An integer factor (a kernel size, say); 1 when absent.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub factor: i64,
    /// An integer added after the factor; 0 when absent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: i64,
    /// The part written instead of the number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<Part>,
}

/// Bits of a computed integer written into a little-endian 32-bit word (a command field split
/// over several words): value bits `[from, from + width)` into word bits `[shift, shift +
/// width)`, the word's other bits kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BitField {
    /// The word: a 4-byte target.
    pub target: Target,
    /// The field's first bit in the word.
    pub shift: u32,
    /// The field's width in bits.
    pub width: u32,
    /// The value's first bit written.
    #[serde(default)]
    pub from: u32,
}

impl BitField {
    /// Whether the field fits a 32-bit word and a 64-bit value.
    pub fn is_valid(&self) -> bool {
        self.width >= 1 && self.shift + self.width <= 32 && self.from + self.width <= 64
    }

    fn mask(&self) -> u32 {
        (((1u64 << self.width) - 1) as u32) << self.shift
    }

    /// `word` with the field set from `value`.
    pub fn set(&self, word: u32, value: u64) -> u32 {
        let bits = ((value >> self.from) as u32) << self.shift;
        (word & !self.mask()) | (bits & self.mask())
    }

    /// Whether `word`'s field holds `value`'s bits.
    pub fn holds(&self, word: u32, value: u64) -> bool {
        self.set(word, value) == word
    }
}

/// A target whose value the serializer computes from several quantities: written at `target`
/// in `encoding`, or spread over the bit fields `bits` (then `target` is absent and the value
/// is an integer).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Computed {
    /// Where the value lands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// How it is written there.
    #[serde(default = "le32")]
    pub encoding: Encoding,
    /// The bit fields the value is spread over, instead of `target`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bits: Vec<BitField>,
    /// The quantity keys read, in the formulas' order (`x0`, `x1`, ...).
    pub inputs: Vec<String>,
    /// The formulas tried.
    pub candidates: Vec<Candidate>,
    /// The formula promotion kept; when set, only it is tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<Candidate>,
}

fn le32() -> Encoding {
    Encoding::Le32
}

/// Most bit fields one computed value spreads over.
pub const MAX_BITS: usize = 8;

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Unsigned(u) => Some(*u as f64),
        Value::Signed(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        Value::Bytes(_) => None,
    }
}

impl Candidate {
    /// The value for inputs `xs`, when every input is a number and the result is finite.
    pub fn eval(&self, xs: &[f64]) -> Option<f64> {
        let (last, rest) = xs.split_last()?;
        let product = |v: &[f64]| v.iter().product::<f64>();
        let v = match self.op {
            Op::Product => product(xs),
            Op::Ratio => product(rest) / last,
            Op::InverseRatio => last / product(rest),
        } * self.factor as f64
            + self.offset as f64;
        let v = match self.part {
            None => v,
            Some(Part::F32Exponent) => f64::from(((v as f32).to_bits() >> 23) & 0xff),
        };
        v.is_finite().then_some(v)
    }

    /// The candidate in words (`x0*x1/x2 * 64`).
    pub fn text(&self, n: usize) -> String {
        let xs: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
        let (last, rest) = xs
            .split_last()
            .map_or(("", &xs[..0]), |(l, r)| (l.as_str(), r));
        let body = match self.op {
            Op::Product => xs.join("*"),
            Op::Ratio => format!("{}/{last}", rest.join("*")),
            Op::InverseRatio => format!("{last}/({})", rest.join("*")),
        };
        let mut t = body;
        if self.factor != 1 {
            t = format!("{t} * {}", self.factor);
        }
        if self.offset != 0 {
            t = format!("{t} + {}", self.offset);
        }
        match self.part {
            None => t,
            Some(Part::F32Exponent) => format!("f32-exponent({t})"),
        }
    }
}

/// The encoded value of candidate `c` for one side of the inputs: floats are rounded to f32
/// before a float encoding, integers must come out whole.
pub fn encoded(c: &Candidate, encoding: Encoding, xs: &[f64]) -> Option<Vec<u8>> {
    let v = c.eval(xs)?;
    let value = match encoding {
        Encoding::F32 | Encoding::F16 | Encoding::F16Nearest | Encoding::Bf16 => {
            Value::Float(f64::from(v as f32))
        }
        _ if v.fract() == 0.0 && v >= 0.0 && v < u64::MAX as f64 => Value::Unsigned(v as u64),
        _ if v.fract() == 0.0 && v < 0.0 && v >= i64::MIN as f64 => Value::Signed(v as i64),
        _ => return None,
    };
    encode(encoding, &value).ok()
}

/// The integer value of candidate `c`, for bit fields: a whole number in 0..2^64.
pub fn integer(c: &Candidate, xs: &[f64]) -> Option<u64> {
    let v = c.eval(xs)?;
    (v.fract() == 0.0 && v >= 0.0 && v < u64::MAX as f64).then_some(v as u64)
}

/// The A and B numbers of the inputs, or why the capture set cannot give one (its lookup's
/// reason, or `source-not-encodable` for a value that is not a number).
pub fn inputs(
    keys: &[String],
    lookup: impl Fn(&str) -> Result<Quantity, Reason>,
) -> Result<(Vec<f64>, Vec<f64>), Reason> {
    let mut a = Vec::with_capacity(keys.len());
    let mut b = Vec::with_capacity(keys.len());
    for k in keys {
        let q = lookup(k)?;
        let (Some(x), Some(y)) = (number(&q.a), number(&q.b)) else {
            return Err(Reason::SourceNotEncodable);
        };
        a.push(x);
        b.push(y);
    }
    Ok((a, b))
}

/// A candidate's verdict on one capture set.
#[derive(Clone, Debug, Serialize)]
pub struct CandidateRow {
    /// Index of the computed value in the mapping.
    pub computed: usize,
    /// The formula, in words.
    pub formula: String,
    /// The candidate.
    pub candidate: Candidate,
    /// Its A value is A's bytes and its B value B's bytes at the target.
    pub kept: bool,
}
