//! Little-endian field reader and writer for the descriptor wire format
//! (`descriptor.md` §0: every multi-byte field is little-endian, packed back to back).

use crate::error::{DecodeError, Result, Rule};

/// A bounds-checked cursor over one descriptor. `end` is `descriptor_length`: no
/// read goes past it (`descriptor.md` §14 #1).
///
/// It holds the unread rest of the input, so each read is a single length check.
pub(crate) struct Reader<'a> {
    /// The bytes not read yet.
    rest: &'a [u8],
    /// Length of the whole input: the position is `len - rest.len()`.
    len: usize,
}

impl<'a> Reader<'a> {
    /// A reader at offset `pos` of `buf`, which must already be cut to
    /// `descriptor_length` bytes.
    pub(crate) fn new(buf: &'a [u8], pos: usize) -> Self {
        Reader {
            rest: &buf[pos..],
            len: buf.len(),
        }
    }

    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.len - self.rest.len()
    }

    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// Takes `n` bytes, or fails naming `what` and the offset where it would start.
    #[inline]
    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let Some((s, rest)) = self.rest.split_at_checked(n) else {
            return Err(self.beyond(n, what));
        };
        self.rest = rest;
        Ok(s)
    }

    #[inline]
    pub(crate) fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let Some((a, rest)) = self.rest.split_first_chunk::<N>() else {
            return Err(self.beyond(N, what));
        };
        self.rest = rest;
        Ok(*a)
    }

    /// Takes `N` bytes if that many remain; `None` (and nothing taken) otherwise.
    #[inline]
    pub(crate) fn try_array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (a, rest) = self.rest.split_first_chunk::<N>()?;
        self.rest = rest;
        Some(*a)
    }

    /// The error for a field of `n` bytes that would run past the end.
    #[cold]
    fn beyond(&self, n: usize, what: &str) -> DecodeError {
        DecodeError::fail(
            Rule::BeyondDescriptorLength,
            self.pos(),
            format_args!(
                "{what} needs {n} bytes but only {} remain before descriptor_length",
                self.remaining()
            ),
        )
    }

    #[inline]
    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }
    #[inline]
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    #[inline]
    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    #[inline]
    pub(crate) fn f64(&mut self, what: &'static str) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array(what)?))
    }

    /// Reads `n` u64 values (n ≤ 64, already bounded by rank).
    pub(crate) fn u64s(&mut self, n: usize, what: &'static str) -> Result<Vec<u64>> {
        let mut v = Vec::new();
        self.u64s_into(n, what, &mut v)?;
        Ok(v)
    }

    /// [`u64s`](Self::u64s) into `out`.
    #[inline]
    pub(crate) fn u64s_into(
        &mut self,
        n: usize,
        what: &'static str,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        let s = self.take(n * 8, what)?;
        *out = Vec::with_capacity(n);
        out.extend(
            s.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap())),
        );
        Ok(())
    }
    pub(crate) fn i64s(&mut self, n: usize, what: &'static str) -> Result<Vec<i64>> {
        let s = self.take(n * 8, what)?;
        Ok(s.chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }
    pub(crate) fn u32s(&mut self, n: usize, what: &'static str) -> Result<Vec<u32>> {
        let s = self.take(n * 4, what)?;
        Ok(s.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }

    /// Reads `n` reserved bytes and fails unless all are zero.
    #[inline]
    pub(crate) fn reserved(&mut self, n: usize, what: &'static str) -> Result<()> {
        let start = self.pos();
        let s = self.take(n, what)?;
        if s.iter().any(|&b| b != 0) {
            return Err(non_zero(s, start, what));
        }
        Ok(())
    }
}

/// The error for reserved bytes `s` (starting at offset `start`) that are not all zero.
#[cold]
pub(crate) fn non_zero(s: &[u8], start: usize, what: &str) -> DecodeError {
    let i = s.iter().position(|&b| b != 0).unwrap_or(0);
    DecodeError::fail(
        Rule::ReservedNonZero,
        start + i,
        format_args!("{what} must be zero, found {:#04x}", s[i]),
    )
}

/// Appends little-endian fields to a byte vector.
pub(crate) trait Put {
    fn put_u8(&mut self, v: u8);
    fn put_u16(&mut self, v: u16);
    fn put_u32(&mut self, v: u32);
    fn put_u64(&mut self, v: u64);
    fn put_i64(&mut self, v: i64);
    fn put_f64(&mut self, v: f64);
    fn put_zeros(&mut self, n: usize);
}

impl Put for Vec<u8> {
    #[inline]
    fn put_u8(&mut self, v: u8) {
        self.push(v)
    }
    #[inline]
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_le_bytes())
    }
    #[inline]
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes())
    }
    #[inline]
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes())
    }
    #[inline]
    fn put_i64(&mut self, v: i64) {
        self.extend_from_slice(&v.to_le_bytes())
    }
    #[inline]
    fn put_f64(&mut self, v: f64) {
        self.extend_from_slice(&v.to_le_bytes())
    }
    #[inline]
    fn put_zeros(&mut self, n: usize) {
        self.resize(self.len() + n, 0)
    }
}
