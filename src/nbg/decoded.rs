//! A record instance decoded through its field-map table and encoded back from it: one generic
//! read and one generic write for every record the map defines, as binrw or a Kaitai `.ksy`
//! reads and writes from one definition. A field added to a table is read, kept and written
//! again here without another line; the typed records of `parse` are views of these values for
//! the documents and the cross-checks, never the source of the re-encoding.

use crate::nbg::fieldmap::{Field, Record, Type, View, Writer};
use crate::nbg::read::{NameTail, fixed_name, fixed_text};

/// One field's decoded value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    /// An integer (`U8`, `U32`, `I32`, `U64`, `Magic`) as its unsigned little-endian value;
    /// bit parts are read from it.
    Int(u64),
    /// A `U32s` field's words.
    Words(Box<[u32]>),
    /// A string field: its text and the bytes after its NUL (boxed: names are few, and the
    /// integers of a patch table many).
    Name(Box<(Box<str>, NameTail)>),
    /// Bytes kept whole (`Bytes`).
    Bytes(Box<[u8]>),
}

/// Why bytes do not decode as a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// No layout of the record has this many bytes.
    Size,
    /// A string field is not NUL-terminated strict UTF-8 within its width.
    Name(&'static Field),
}

/// The values of one record instance, one per field the instance holds (a version-gated or
/// shorter form ends before the first field it does not have).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    record: Record,
    size: usize,
    values: Box<[Value]>,
    /// The first field set to a value it cannot hold (`set_part`), refused on write.
    unfit: Option<&'static str>,
}

impl Decoded {
    /// `bytes` decoded as `record` at its full size or a shorter size the record allows.
    pub fn read(record: Record, bytes: &[u8]) -> Result<Self, Unreadable> {
        let view = View::new(&record, bytes).ok_or(Unreadable::Size)?;
        let values = record
            .fields
            .iter()
            .take_while(|f| view.has(f))
            .map(|f| match f.ty {
                Type::U32s => Ok(Value::Words(view.words(f).into())),
                Type::Str => fixed_name(view.bytes(f))
                    .map(|(text, tail)| Value::Name(Box::new((text.into(), tail))))
                    .ok_or(Unreadable::Name(f)),
                Type::Bytes => Ok(Value::Bytes(view.bytes(f).into())),
                Type::U8 | Type::U32 | Type::I32 | Type::U64 | Type::Magic => {
                    Ok(Value::Int(view.uint(f)))
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Decoded {
            record,
            size: bytes.len(),
            values,
            unfit: None,
        })
    }

    /// `bytes` checked as `record` without keeping a value: the size and every name `read`
    /// checks, in the same order, and a view to read the integers through.
    pub fn check(record: Record, bytes: &[u8]) -> Result<View<'_>, Unreadable> {
        let view = View::new(&record, bytes).ok_or(Unreadable::Size)?;
        let bad = record
            .fields
            .iter()
            .take_while(|f| view.has(f))
            .find(|f| f.ty == Type::Str && fixed_text(view.bytes(f)).is_none());
        match bad {
            Some(f) => Err(Unreadable::Name(f)),
            None => Ok(view),
        }
    }

    /// The record layout the values were read through.
    pub fn record(&self) -> Record {
        self.record
    }

    /// Bytes of the instance.
    pub fn size(&self) -> usize {
        self.size
    }

    fn position(&self, f: &Field) -> Option<usize> {
        let i = self
            .record
            .fields
            .iter()
            .position(|g| g.offset == f.offset)?;
        debug_assert_eq!(
            self.record.fields[i].name, f.name,
            "a field of another record"
        );
        (i < self.values.len()).then_some(i)
    }

    fn value(&self, f: &Field) -> Option<&Value> {
        self.values.get(self.position(f)?)
    }

    /// Whether every byte the values encode to is zero (an unused, all-zero record).
    pub fn is_zero(&self) -> bool {
        self.values.iter().all(|v| match v {
            Value::Int(raw) => *raw == 0,
            Value::Words(w) => w.iter().all(|&x| x == 0),
            Value::Name(name) => name.0.is_empty() && name.1.is_zero(),
            Value::Bytes(b) => b.iter().all(|&x| x == 0),
        })
    }

    /// Set an integer field the instance holds (a value wider than the field is refused when
    /// written); `false` when it does not hold it.
    pub fn set_uint(&mut self, f: &Field, v: u64) -> bool {
        match self.position(f) {
            Some(i) => {
                self.values[i] = Value::Int(v);
                true
            }
            None => false,
        }
    }

    /// Set part `i` of an integer field; a value wider than the part is refused when written.
    pub fn set_part(&mut self, f: &'static Field, i: usize, v: u64) -> bool {
        let (Some(raw), Some(p)) = (self.opt_uint(f), f.parts.get(i)) else {
            return false;
        };
        if v & !p.mask() != 0 {
            self.unfit.get_or_insert(f.name);
        }
        let clear = raw & !(p.mask() << p.shift);
        self.set_uint(f, clear | (v & p.mask()) << p.shift)
    }

    /// Set a string field's text, keeping the bytes after its NUL (a text too long for the
    /// field is refused when written).
    pub fn set_name(&mut self, f: &Field, text: &str) -> bool {
        match self.position(f).map(|i| &mut self.values[i]) {
            Some(Value::Name(name)) => {
                name.0 = text.into();
                true
            }
            _ => false,
        }
    }

    /// Whether the instance holds `f`.
    pub fn has(&self, f: &Field) -> bool {
        self.value(f).is_some()
    }

    /// An integer field, `None` when the instance does not hold it.
    pub fn opt_uint(&self, f: &Field) -> Option<u64> {
        match self.value(f)? {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// A u32 field, `None` when the instance does not hold it.
    pub fn opt_u32(&self, f: &Field) -> Option<u32> {
        self.opt_uint(f).map(|v| v as u32)
    }

    /// A u32 field, zero when absent.
    pub fn u32(&self, f: &Field) -> u32 {
        self.opt_u32(f).unwrap_or(0)
    }

    /// A bit part of an integer field, `None` when the field is absent.
    pub fn part(&self, p: crate::nbg::fieldmap::BitPart) -> Option<u32> {
        self.opt_uint(p.field).map(|raw| p.get_as(raw))
    }

    /// The words of a `U32s` field (empty when absent).
    pub fn words(&self, f: &Field) -> &[u32] {
        match self.value(f) {
            Some(Value::Words(w)) => w,
            _ => &[],
        }
    }

    /// A string field's text and the bytes after its NUL, `None` when absent.
    pub fn name(&self, f: &Field) -> Option<(&str, &NameTail)> {
        match self.value(f)? {
            Value::Name(name) => Some((&name.0, &name.1)),
            _ => None,
        }
    }

    /// The instance encoded again from its values through the same table, each name followed
    /// by its kept tail; a value that does not fit its field is refused, never truncated.
    pub fn write(&self) -> Writer {
        let mut w = Writer::new(self.size);
        for (f, v) in self.record.fields.iter().zip(self.values.iter()) {
            if self.unfit == Some(f.name) {
                w.refuse(f);
                continue;
            }
            match v {
                Value::Int(raw) => w.put_uint(f, *raw),
                Value::Words(words) => w.put_words(f, words),
                Value::Name(name) => w.put_name(f, &name.0, &name.1),
                Value::Bytes(bytes) => w.put_bytes(f, bytes),
            };
        }
        w
    }
}

/// A record's integer fields as the cross-checks read them: from its decoded values, or in
/// check-only mode straight from its bytes (`Decoded::check`), so both read one definition.
pub trait Fields {
    /// A u32 field, zero when the instance does not hold it.
    fn u32(&self, f: &Field) -> u32;
    /// A u32 field, `None` when the instance does not hold it.
    fn opt_u32(&self, f: &Field) -> Option<u32>;
}

/// `Fields` that `bytes` checked as `record` give (`Unreadable` where they do not).
pub trait ReadFields<'a>: Fields + Sized {
    /// Check `bytes` as `record`, keeping what the type keeps.
    fn read(record: Record, bytes: &'a [u8]) -> Result<Self, Unreadable>;
}

impl Fields for Decoded {
    fn u32(&self, f: &Field) -> u32 {
        Decoded::u32(self, f)
    }
    fn opt_u32(&self, f: &Field) -> Option<u32> {
        Decoded::opt_u32(self, f)
    }
}

impl ReadFields<'_> for Decoded {
    fn read(record: Record, bytes: &[u8]) -> Result<Self, Unreadable> {
        Decoded::read(record, bytes)
    }
}

impl Fields for View<'_> {
    fn u32(&self, f: &Field) -> u32 {
        View::u32(self, f)
    }
    fn opt_u32(&self, f: &Field) -> Option<u32> {
        View::opt_u32(self, f)
    }
}

impl<'a> ReadFields<'a> for View<'a> {
    fn read(record: Record, bytes: &'a [u8]) -> Result<Self, Unreadable> {
        Decoded::check(record, bytes)
    }
}

// Patch tables hold thousands of records of integers: a value stays three words.
const _: () = assert!(std::mem::size_of::<Value>() <= 24);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nbg::fieldmap as fm;

    #[test]
    fn every_record_reads_and_writes_back_its_own_bytes() {
        // A patterned instance of each record at each size it allows (names made valid text).
        for record in fm::ALL {
            let sizes = (1..=record.size).filter(|&n| record.has_size(n));
            for size in sizes {
                let mut bytes: Vec<u8> = (0..size).map(|i| (i * 37 % 251) as u8).collect();
                for f in record.fields.iter().filter(|f| f.end() <= size) {
                    if f.ty == Type::Str {
                        bytes[f.offset..f.end()].fill(0);
                        bytes[f.offset..f.offset + 3].copy_from_slice(b"abc");
                        bytes[f.end() - 1] = 7;
                    }
                }
                let d = Decoded::read(record, &bytes)
                    .unwrap_or_else(|e| panic!("{} at {size}: {e:?}", record.id));
                assert_eq!(d.write().finish().ok(), Some(bytes), "{}", record.id);
            }
        }
    }

    #[test]
    fn a_name_without_its_nul_and_a_size_without_a_layout_are_refused() {
        let bytes = [b'x'; fm::layer::SIZE];
        assert_eq!(
            Decoded::read(fm::layer::RECORD, &bytes),
            Err(Unreadable::Name(&fm::layer::name))
        );
        assert_eq!(
            Decoded::read(fm::hw_init_operation::RECORD, &[0; 5]),
            Err(Unreadable::Size)
        );
    }

    #[test]
    fn values_are_read_by_field_and_part() {
        let mut bytes = vec![0u8; fm::operation::SIZE];
        bytes[fm::operation::patch_count.offset] = 9;
        bytes[fm::operation::preempt_word.offset] = 0x35; // preempt 5, abs_share_id 3
        let d = Decoded::read(fm::operation::RECORD, &bytes).unwrap();
        assert_eq!(d.u32(&fm::operation::patch_count), 9);
        assert_eq!(d.part(fm::operation::preempt_word::preempt), Some(5));
        assert_eq!(d.part(fm::operation::preempt_word::abs_share_id), Some(3));
    }
}
