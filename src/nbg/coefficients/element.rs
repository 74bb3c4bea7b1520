//! What a code means: the element value, escape or zero run it stands for, in the header's
//! mode (8 or 16 bits, with or without the vendor's zero-run-length code), and back.
//!
//! Facts: Mesa etnaviv_ml_nn_v8.c (`encode_value`, `huffman_code`: the plain 8-bit mode) and
//! the vendor's encoder `gc_vx_nn_encoder.c` (flycat0101/gpu-viv6-andy, viv_6.4.3.p0: the
//! run-length mode, `FindBest2PlusRunSets`, and the 16-bit forms), written out in
//! `notebooks/coefficients.md`:
//! - each symbol stands for the size class its `symbol_map` nibble names; the value's first bit
//!   goes into the free bit when the symbol has one;
//! - plain mode: classes 0..7 are bit lengths of a ones'-complement magnitude, the top bit
//!   implied and the sign lowest;
//! - run-length mode: classes 0 and 8 are zero runs (entries 0-1 of `run_length_table` by one
//!   bit, entries 2.. by log2(size-2) bits; entry r is a run of r+1), 1..6 sign-magnitude
//!   literals, 7 a raw escape;
//! - 16-bit elements: the high byte is coded so, the low byte follows raw in the value's low
//!   8 bits; in run-length mode a non-negative high byte is coded plus one (measured: the raw
//!   escape carries the high byte as is).
//!
//! Proved on the real files: every code of the 1,321 A733 streams re-encodes from its element to
//! the same bits (`code` is `element`'s inverse, checked per code by `decode`).

use super::code::{Code, ESCAPE, has_free_bit, parts, symbol};
use super::stream_error::{StreamCode, StreamError};

/// The zero-run table of the run-length mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunTable {
    /// `run_length_table[..run_length_size]`: entry r is a run of r+1 zeros.
    pub entries: Vec<u8>,
    /// Index bits of a class-8 run: log2(size - 2).
    pub set2_bits: u8,
}

/// How a header's codes are read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheme {
    /// 16-bit elements (`bit16`).
    pub bit16: bool,
    /// The run table, in run-length mode.
    pub runs: Option<RunTable>,
    /// The size class of each symbol (`symbol_map`).
    pub classes: [u8; 8],
}

/// One decoded element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    /// A coded value (8- or 16-bit pattern).
    Value(u16),
    /// A value sent through the raw escape (class 7 of the run-length mode).
    Raw(u16),
    /// A run of zeros: table entry `entry`.
    Run {
        /// Its run-table entry.
        entry: u8,
        /// How many zeros.
        zeros: u16,
    },
}

/// Size class of the raw escape in run-length mode.
const RAW: u8 = 7;
/// Size class of a set-2 run.
const SET2: u8 = 8;

impl Scheme {
    /// The scheme of a header: `run_length_size` 0 (plain) or one the vendor writes (4, 6, 10,
    /// 18), and classes inside the mode's range.
    pub fn of(
        bit16: bool,
        run_length_size: u8,
        table: &[u8],
        classes: [u8; 8],
    ) -> Result<Scheme, StreamError> {
        let runs = match run_length_size {
            0 => None,
            4 | 6 | 10 | 18 => Some(RunTable {
                entries: table[..usize::from(run_length_size).min(table.len())].to_vec(),
                set2_bits: (run_length_size - 2).trailing_zeros() as u8,
            }),
            n => {
                return Err(StreamError::new(
                    StreamCode::CoefRunTableSize,
                    0,
                    format!("run_length_size {n}: the vendor's encoder writes 0, 4, 6, 10 or 18"),
                ));
            }
        };
        let top = if runs.is_some() { SET2 } else { 7 };
        if let Some(s) = classes.iter().position(|&c| c > top) {
            return Err(StreamError::new(
                StreamCode::CoefSymbolClass,
                0,
                format!("symbol {s} names size class {}, past {top}", classes[s]),
            ));
        }
        Ok(Scheme {
            bit16,
            runs,
            classes,
        })
    }

    /// The value bits of `symbol` (with or without its free bit).
    pub fn value_bits(&self, symbol: u8, free: bool) -> u8 {
        let class = self.classes[usize::from(symbol & 7)];
        let low = if self.bit16 { 8 } else { 0 };
        let head = match &self.runs {
            None => class.max(1) + low,
            Some(t) => match class {
                0 => 1,
                SET2 => t.set2_bits,
                RAW => 8 + low,
                c => c + low,
            },
        };
        head - u8::from(free)
    }

    /// The element `c` codes.
    pub fn element(&self, c: &Code) -> Result<Element, StreamError> {
        let (s, free) = symbol(c.part0, c.part1);
        let class = self.classes[usize::from(s)];
        let split =
            u32::from(self.bit16 && !(self.runs.is_some() && matches!(class, 0 | SET2))) * 8;
        let low = (c.value & ((1 << split) - 1)) as u16;
        let high = c.value >> split;
        // The value's first bit sits in the free bit when there is one.
        let m = free.map_or(high, |f| high << 1 | u32::from(f));
        let Some(t) = &self.runs else {
            let byte = ones_complement(m, class);
            return Ok(Element::Value(self.join(byte, low)));
        };
        match class {
            0 | SET2 => {
                let entry = if class == 0 { m } else { m + 2 };
                let Some(&r) = t.entries.get(entry as usize) else {
                    return Err(StreamError::new(
                        StreamCode::CoefRunIndex,
                        c.at,
                        format!(
                            "a run names entry {entry} of a {}-entry run table",
                            t.entries.len()
                        ),
                    ));
                };
                Ok(Element::Run {
                    entry: entry as u8,
                    zeros: u16::from(r) + 1,
                })
            }
            RAW => Ok(Element::Raw(self.join(m as u8, low))),
            _ => {
                let v = sign_magnitude(m, class);
                // A 16-bit literal's non-negative high byte is coded plus one.
                let byte = (if self.bit16 && v > 0 { v - 1 } else { v }) as u8;
                Ok(Element::Value(self.join(byte, low)))
            }
        }
    }

    /// The code of `e`, at `at`: `element`'s inverse (the first symbol of the element's class).
    pub fn code(&self, e: Element, at: u64) -> Option<Code> {
        let (class, m, low) = match (e, &self.runs) {
            (Element::Value(v), None) => {
                let (high, low) = self.split(v);
                let (mag, sign) = if high < 0x80 {
                    (high, 0)
                } else {
                    (high ^ 0xff, 1)
                };
                let class = bit_len(u32::from(mag));
                (class, strip_top(u32::from(mag), class) << 1 | sign, low)
            }
            (Element::Value(v), Some(_)) => {
                let (high, low) = self.split(v);
                let mut h = i32::from(high as i8);
                if self.bit16 && h >= 0 {
                    h += 1;
                }
                let class = bit_len(h.unsigned_abs());
                if !(1..RAW).contains(&class) {
                    return None;
                }
                (
                    class,
                    strip_top(h.unsigned_abs(), class) << 1 | u32::from(h < 0),
                    low,
                )
            }
            (Element::Raw(v), Some(_)) => {
                let (high, low) = self.split(v);
                (RAW, u32::from(high), low)
            }
            (Element::Run { entry, .. }, Some(_)) => {
                let class = if entry < 2 { 0 } else { SET2 };
                (
                    class,
                    u32::from(entry - if entry < 2 { 0 } else { 2 }),
                    None,
                )
            }
            _ => return None,
        };
        let s = self.classes.iter().position(|&c| c == class)? as u8;
        let free = has_free_bit(s);
        let (part0, part1) = parts(s, if free { (m & 1) as u8 } else { 0 });
        let high = if free { m >> 1 } else { m };
        let value_bits = self.value_bits(s, free);
        let value = match low {
            Some(l) => high << 8 | u32::from(l),
            None => high,
        };
        Some(Code {
            at,
            part0,
            part1,
            value,
            value_bits,
        })
    }

    /// The table `decode` reads codes through (`CodeTable`).
    pub fn code_table(&self) -> CodeTable {
        let rows = std::array::from_fn(|key| {
            let (part0, part1) = CodeTable::parts_of(key);
            let (s, free) = symbol(part0, part1);
            let value_bits = self.value_bits(s, free.is_some());
            let class = self.classes[usize::from(s)];
            let split = if self.bit16 && !(self.runs.is_some() && matches!(class, 0 | SET2)) {
                8
            } else {
                0
            };
            let elements = (0..1u32 << value_bits.saturating_sub(split))
                .map(|high| {
                    let c = Code {
                        at: 0,
                        part0,
                        part1,
                        value: high << split,
                        value_bits,
                    };
                    let e = self.element(&c).ok()?;
                    (self.code(e, 0) == Some(c)).then_some(e)
                })
                .collect();
            Row {
                value_bits,
                split,
                elements,
            }
        });
        CodeTable {
            rows,
            scheme: self.clone(),
        }
    }

    /// A 16-bit element's high and low byte, or an 8-bit element alone.
    fn split(&self, v: u16) -> (u8, Option<u8>) {
        if self.bit16 {
            ((v >> 8) as u8, Some(v as u8))
        } else {
            (v as u8, None)
        }
    }

    fn join(&self, high: u8, low: u16) -> u16 {
        if self.bit16 {
            u16::from(high) << 8 | low
        } else {
            u16::from(high)
        }
    }
}

/// Every code's element, looked up: for each first and second part, and each value of the
/// bits that decide the element (all of them, or the high byte of a 16-bit element, whose low
/// byte passes through raw both ways), the element when it re-encodes to that code. Built once
/// per header, so a stream costs one lookup per code instead of a decode and an encode; a
/// missing entry sends the code to `element` and `code` for the error they name.
pub struct CodeTable {
    /// By `CodeTable::key`: first parts 0..8 (2, the escape, unused), then the escape's four
    /// second parts.
    rows: [Row; 12],
    /// The scheme it was built from, which names a missing entry's error.
    scheme: Scheme,
}

/// One first and second part's codes.
struct Row {
    value_bits: u8,
    /// Low bits that pass through raw (8 for a 16-bit element's low byte, else 0).
    split: u8,
    /// By the value's bits above `split`: the element with a zero low byte, when canonical.
    elements: Vec<Option<Element>>,
}

impl CodeTable {
    fn key(part0: u8, part1: Option<u8>) -> usize {
        match part1 {
            Some(p1) if part0 == ESCAPE => 8 + usize::from(p1 & 3),
            _ => usize::from(part0 & 7),
        }
    }

    fn parts_of(key: usize) -> (u8, Option<u8>) {
        if key < 8 {
            (key as u8, None)
        } else {
            (ESCAPE, Some((key - 8) as u8))
        }
    }

    /// Value bits of the code whose parts these are.
    #[inline]
    pub fn value_bits(&self, part0: u8, part1: Option<u8>) -> u8 {
        self.rows[Self::key(part0, part1)].value_bits
    }

    /// The element `c` codes, refused when it decodes to nothing or when it does not
    /// re-encode to `c` (`Scheme::element`, `Scheme::code`).
    #[inline]
    pub fn element(&self, c: &Code) -> Result<Element, StreamError> {
        let row = &self.rows[Self::key(c.part0, c.part1)];
        let low = (c.value & ((1 << row.split) - 1)) as u16;
        match row.elements.get((c.value >> row.split) as usize) {
            Some(Some(Element::Value(v))) => Ok(Element::Value(v | low)),
            Some(Some(Element::Raw(v))) => Ok(Element::Raw(v | low)),
            Some(Some(run)) => Ok(*run),
            _ => Err(self.refusal(c)),
        }
    }

    /// Why `c` has no entry.
    #[cold]
    fn refusal(&self, c: &Code) -> StreamError {
        match self.scheme.element(c) {
            Err(e) => e,
            Ok(e) => StreamError::new(
                StreamCode::CoefCodeNotCanonical,
                c.at,
                format!("{e:?} does not re-encode to the code it was read from"),
            ),
        }
    }
}

/// Bits of `v` below its top bit (of a `class`-bit number).
fn strip_top(v: u32, class: u8) -> u32 {
    if class <= 1 {
        0
    } else {
        v & ((1 << (class - 1)) - 1)
    }
}

/// The bit length of `v` (0 for 0).
fn bit_len(v: u32) -> u8 {
    (32 - v.leading_zeros()) as u8
}

/// The byte a plain-mode value `m` (sign lowest, magnitude top bit implied) of `class` stands for.
fn ones_complement(m: u32, class: u8) -> u8 {
    let sign = m & 1;
    let mag = if class == 0 {
        0
    } else {
        (m >> 1) | 1 << (class - 1)
    } as u8;
    if sign == 1 { mag ^ 0xff } else { mag }
}

/// The signed number a run-length-mode literal `m` of `class` stands for.
fn sign_magnitude(m: u32, class: u8) -> i32 {
    let mag = ((m >> 1) | 1 << (class - 1)) as i32;
    if m & 1 == 1 { -mag } else { mag }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn each_code_round_trips(s: &Scheme, values: impl Iterator<Item = Element>) {
        for e in values {
            let Some(c) = s.code(e, 0) else { continue };
            assert_eq!(s.element(&c), Ok(e), "{e:?} -> {c:?}");
            assert_eq!(c.value_bits, {
                let (sym, free) = symbol(c.part0, c.part1);
                s.value_bits(sym, free.is_some())
            });
        }
    }

    #[test]
    fn plain_8_and_16_bit_values_round_trip() {
        let classes = [4, 3, 2, 0, 5, 1, 6, 7];
        for bit16 in [false, true] {
            let s = Scheme::of(bit16, 0, &[], classes).unwrap();
            let top = if bit16 { u16::MAX } else { 255 };
            each_code_round_trips(&s, (0..=top).map(Element::Value));
            assert!((0..=255u16).all(|v| s.code(Element::Value(v), 0).is_some()));
        }
    }

    #[test]
    fn run_length_literals_raw_escapes_and_runs_round_trip() {
        let classes = [3, 2, 4, 1, 5, 0, 8, 7];
        let table = [4, 0, 1, 2];
        for bit16 in [false, true] {
            let s = Scheme::of(bit16, 4, &table, classes).unwrap();
            let top = if bit16 { u16::MAX } else { 255 };
            each_code_round_trips(&s, (0..=top).map(Element::Value));
            each_code_round_trips(&s, (0..=top).map(Element::Raw));
            for entry in 0..4 {
                let zeros = u16::from(table[usize::from(entry)]) + 1;
                each_code_round_trips(&s, std::iter::once(Element::Run { entry, zeros }));
            }
        }
    }

    #[test]
    fn a_16_bit_literal_codes_its_non_negative_high_byte_plus_one() {
        let s = Scheme::of(true, 4, &[4, 0, 1, 2], [3, 2, 4, 1, 5, 0, 8, 7]).unwrap();
        // 0x00ff: high byte 0 is coded as +1, class 1.
        let c = s.code(Element::Value(0x00ff), 0).unwrap();
        let (sym, _) = symbol(c.part0, c.part1);
        assert_eq!(s.classes[usize::from(sym)], 1);
        // -1 (0xffff): high byte -1, class 1 with the sign set.
        let c = s.code(Element::Value(0xffff), 0).unwrap();
        assert_eq!(s.element(&c), Ok(Element::Value(0xffff)));
    }

    #[test]
    fn sizes_and_classes_outside_the_mode_are_refused() {
        let e = Scheme::of(false, 5, &[0; 18], [0; 8]).unwrap_err();
        assert_eq!(e.code, StreamCode::CoefRunTableSize);
        let e = Scheme::of(false, 0, &[], [8, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(e.code, StreamCode::CoefSymbolClass);
        let s = Scheme::of(false, 4, &[1, 2, 3], [3, 2, 4, 1, 5, 0, 8, 7]).unwrap();
        let c = s.code(Element::Run { entry: 3, zeros: 4 }, 9).unwrap();
        assert_eq!(s.element(&c).unwrap_err().code, StreamCode::CoefRunIndex);
    }
}
