//! A source value's bytes under an encoding.

use super::*;

/// The bytes of `value` under `encoding`; integers must fit, floats must be exact.
pub fn encode(encoding: Encoding, value: &Value) -> Result<Vec<u8>, EncodeError> {
    let int = |width: u32| -> Result<Vec<u8>, EncodeError> {
        let v: u64 = match value {
            Value::Unsigned(u) if width == 64 || *u < 1u64 << width => *u,
            Value::Signed(i) if width == 64 || (*i >= -(1i64 << (width - 1))) => {
                (*i as u64)
                    & if width == 64 {
                        u64::MAX
                    } else {
                        (1 << width) - 1
                    }
            }
            _ => {
                return Err(EncodeError::NotInteger {
                    value: value.clone(),
                    width,
                });
            }
        };
        Ok(v.to_le_bytes()[..width as usize / 8].to_vec())
    };
    let float = || -> Result<f32, EncodeError> {
        let f = match value {
            Value::Float(f) => *f,
            Value::Unsigned(u) if *u < 1 << 24 => *u as f64,
            Value::Signed(i) if i.unsigned_abs() < 1 << 24 => *i as f64,
            _ => return Err(EncodeError::NotNumber(value.clone())),
        };
        let x = f as f32;
        if f64::from(x) == f && x.is_finite() {
            Ok(x)
        } else {
            Err(EncodeError::NotF32(f))
        }
    };
    match encoding {
        Encoding::U8 => int(8),
        Encoding::Le16 => int(16),
        Encoding::Le32 => int(32),
        Encoding::Le64 => int(64),
        Encoding::F32 => Ok(float()?.to_le_bytes().to_vec()),
        Encoding::Bf16 => {
            let x = float()?;
            if x.to_bits() & 0xffff == 0 {
                Ok(((x.to_bits() >> 16) as u16).to_le_bytes().to_vec())
            } else {
                Err(EncodeError::NotBf16(x))
            }
        }
        Encoding::F16Nearest => match value {
            Value::Float(f) if f.is_finite() => {
                Ok(numeric::f32_to_f16(*f as f32).to_le_bytes().to_vec())
            }
            Value::Unsigned(_) | Value::Signed(_) => {
                Ok(numeric::f32_to_f16(float()?).to_le_bytes().to_vec())
            }
            _ => Err(EncodeError::NotNumber(value.clone())),
        },
        Encoding::F16 => {
            let x = float()?;
            let h = numeric::f32_to_f16(x);
            if numeric::f16_to_f32(h) == x {
                Ok(h.to_le_bytes().to_vec())
            } else {
                Err(EncodeError::NotF16(x))
            }
        }
        Encoding::Raw | Encoding::Text => match value {
            Value::Bytes(b) if !b.is_empty() && b.len() <= MAX_VALUE_BYTES => Ok(b.clone()),
            _ => Err(EncodeError::Raw(value.clone())),
        },
    }
}
