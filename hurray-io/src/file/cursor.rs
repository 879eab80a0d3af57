//! Bounded little-endian reading over one section of a file, reporting absolute
//! byte offsets. Reading past the end of the section is `SectionLength`.

use crate::error::{Error, FormatRule, Result};

/// A read position inside `bytes`, which start at absolute file offset `base`.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
    section: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8], base: u64, section: &'static str) -> Cursor<'a> {
        Cursor {
            bytes,
            pos: 0,
            base,
            section,
        }
    }

    /// Absolute offset of the next byte.
    pub(crate) fn at(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left in the section.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Error::format(
                FormatRule::SectionLength,
                self.at(),
                format_args!(
                    "{what} needs {n} bytes but only {} remain in the {} section",
                    self.remaining(),
                    self.section
                ),
            ));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }
    pub(crate) fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    pub(crate) fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    pub(crate) fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// Fails with `SectionLength` unless every byte was consumed.
    pub(crate) fn finish(&self) -> Result<()> {
        if self.remaining() != 0 {
            return Err(Error::format(
                FormatRule::SectionLength,
                self.at(),
                format_args!(
                    "{} bytes follow the last entry of the {} section",
                    self.remaining(),
                    self.section
                ),
            ));
        }
        Ok(())
    }
}

/// Reads a u16-length-prefixed UTF-8 name or key (`what` names it), 1..=65 535 bytes.
/// An empty or non-UTF-8 name is `Utf8` at the offset of its length or first byte.
pub(crate) fn name<'a>(c: &mut Cursor<'a>, what: &str) -> Result<&'a str> {
    let at = c.at();
    let len = c.u16(what)? as usize;
    if len == 0 {
        return Err(Error::format(
            FormatRule::Utf8,
            at,
            format_args!("{what} is empty"),
        ));
    }
    let at = c.at();
    let bytes = c.take(len, what)?;
    std::str::from_utf8(bytes).map_err(|e| {
        Error::format(
            FormatRule::Utf8,
            at + e.valid_up_to() as u64,
            format_args!("{what} is not valid UTF-8"),
        )
    })
}
