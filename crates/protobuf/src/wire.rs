//! The protobuf wire format: varints and fields, read from and written to byte slices.

use crate::error::{Error, Result};

/// Wire type 0: a varint.
pub(crate) const VARINT: u64 = 0;
/// Wire type 1: eight bytes.
pub(crate) const FIXED64: u64 = 1;
/// Wire type 2: a length-delimited payload.
pub(crate) const LEN: u64 = 2;
/// Wire type 5: four bytes.
pub(crate) const FIXED32: u64 = 5;

/// One field of a message: its number, wire type, varint value and payload (the bytes of a
/// length-delimited or fixed-size field).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Raw<'a> {
    pub(crate) number: u64,
    pub(crate) wire: u64,
    pub(crate) varint: u64,
    pub(crate) data: &'a [u8],
}

/// Reads the fields of one message in order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// The bytes not yet read.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    pub(crate) fn varint(&mut self) -> Result<u64> {
        let mut out = 0u64;
        for shift in (0..70).step_by(7) {
            let b = *self.buf.get(self.pos).ok_or(Error::TruncatedVarint)?;
            self.pos += 1;
            if shift < 64 {
                out |= u64::from(b & 0x7f) << shift;
            }
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(Error::VarintTooLong)
    }

    fn take(&mut self, len: u64, field: u64) -> Result<&'a [u8]> {
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| self.pos.checked_add(len))
            .filter(|e| *e <= self.buf.len())
            .ok_or(Error::Truncated { field })?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// The next field; call only when [`Reader::done`] is false.
    pub(crate) fn field(&mut self) -> Result<Raw<'a>> {
        let key = self.varint()?;
        let (number, wire) = (key >> 3, key & 7);
        let mut raw = Raw {
            number,
            wire,
            varint: 0,
            data: &[],
        };
        match wire {
            VARINT => raw.varint = self.varint()?,
            FIXED64 => raw.data = self.take(8, number)?,
            LEN => {
                let len = self.varint()?;
                raw.data = self.take(len, number)?;
            }
            FIXED32 => raw.data = self.take(4, number)?,
            _ => {
                return Err(Error::UnknownWireType {
                    field: number,
                    wire,
                });
            }
        }
        Ok(raw)
    }

    pub(crate) fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Result<Raw<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done() {
            return None;
        }
        let item = self.field();
        if item.is_err() {
            // Nothing after a malformed field can be read.
            self.pos = self.buf.len();
        }
        Some(item)
    }
}

/// Appends a varint.
pub(crate) fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a varint field.
pub(crate) fn put_varint_field(number: u64, v: u64, out: &mut Vec<u8>) {
    put_varint(number << 3 | VARINT, out);
    put_varint(v, out);
}

/// Appends a `fixed64` field (a `double`), little-endian.
pub(crate) fn put_fixed64_field(number: u64, v: u64, out: &mut Vec<u8>) {
    put_varint(number << 3 | FIXED64, out);
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends a length-delimited field.
pub(crate) fn put_bytes_field(number: u64, data: &[u8], out: &mut Vec<u8>) {
    put_varint(number << 3 | LEN, out);
    put_varint(data.len() as u64, out);
    out.extend_from_slice(data);
}

/// Appends a length-delimited field whose payload `write` appends, with its length written
/// before it once known.
pub(crate) fn put_message_field<E>(
    number: u64,
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E> {
    let mut inner = Vec::new();
    write(&mut inner)?;
    put_bytes_field(number, &inner, out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_should_round_trip_and_refuse_truncation_and_overlong_encodings() {
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_varint(v, &mut out);
            assert_eq!(Reader::new(&out).varint(), Ok(v));
        }
        assert_eq!(
            Reader::new(&[0x80, 0x80]).varint(),
            Err(Error::TruncatedVarint)
        );
        assert_eq!(Reader::new(&[0xff; 11]).varint(), Err(Error::VarintTooLong));
    }

    #[test]
    fn fields_should_refuse_unknown_wire_types_and_short_payloads() {
        assert_eq!(
            Reader::new(&[0x0b]).field().err(),
            Some(Error::UnknownWireType { field: 1, wire: 3 })
        );
        assert_eq!(
            Reader::new(&[0x0a, 0x05, b'a']).field().err(),
            Some(Error::Truncated { field: 1 })
        );
        assert_eq!(
            Reader::new(&[0x09, 1, 2]).field().err(),
            Some(Error::Truncated { field: 1 })
        );
        // A length that does not fit in memory.
        let mut huge = vec![0x0a];
        put_varint(u64::MAX, &mut huge);
        assert_eq!(
            Reader::new(&huge).field().err(),
            Some(Error::Truncated { field: 1 })
        );
    }
}
