//! Element types (`element-types.md`): the `type_tag` byte, bit widths, sub-byte
//! packing and the contiguous buffer-size rule (§7).

/// How elements of a type are stored: whole bytes, packed sub-byte codes, or
/// 6-bit codes in 3-byte groups of four.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Storage {
    /// Each element takes this many whole bytes (1, 2, 4, 8, 16, or any private width).
    Bytes(u32),
    /// `bits` ∈ {1, 2, 4}: `8 / bits` elements per byte, element 0 in the low bits.
    Packed {
        /// Bits per element: 1, 2 or 4.
        bits: u8,
    },
    /// 6-bit codes: four elements in each 3-byte group (`element-types.md` §5).
    SixBit,
}

impl Storage {
    /// Bytes needed to store `n` elements contiguously (`element-types.md` §7),
    /// or `None` when the product overflows `u64`.
    ///
    /// ```
    /// use hurray_core::Storage;
    /// assert_eq!(Storage::Packed { bits: 1 }.bytes_for(10), Some(2));
    /// assert_eq!(Storage::SixBit.bytes_for(5), Some(6));
    /// assert_eq!(Storage::Bytes(4).bytes_for(12), Some(48));
    /// ```
    #[inline]
    pub fn bytes_for(self, n: u64) -> Option<u64> {
        match self {
            Storage::Bytes(w) => n.checked_mul(u64::from(w)),
            // The widths of the format divide by a constant: a shift, not a division.
            Storage::Packed { bits: 1 } => Some(n.div_ceil(8)),
            Storage::Packed { bits: 2 } => Some(n.div_ceil(4)),
            Storage::Packed { bits: 4 } => Some(n.div_ceil(2)),
            Storage::Packed { bits } => Some(n.div_ceil(u64::from(8 / bits))),
            Storage::SixBit => n.div_ceil(4).checked_mul(3),
        }
    }

    /// Bits per element.
    pub fn bits(self) -> u32 {
        match self {
            Storage::Bytes(w) => w * 8,
            Storage::Packed { bits } => u32::from(bits),
            Storage::SixBit => 6,
        }
    }

    /// The byte that holds element offset `o` relative to `byte_offset` (floor
    /// semantics for negative offsets, `layouts.md` §1.5), for bounds checks.
    /// For 6-bit types this is the first byte of the element's 3-byte group.
    /// `None` when the byte offset overflows `i128`.
    pub(crate) fn byte_of(self, o: i128) -> Option<i128> {
        match self {
            Storage::Bytes(w) => o.checked_mul(i128::from(w)),
            Storage::Packed { bits } => Some(o.div_euclid(i128::from(8 / bits))),
            Storage::SixBit => o.div_euclid(4).checked_mul(3),
        }
    }

    /// Bytes taken by the element (or group) at an offset: the end of element `o` is
    /// `byte_of(o) + last_len()`.
    pub(crate) fn last_len(self) -> i128 {
        match self {
            Storage::Bytes(w) => i128::from(w),
            Storage::Packed { .. } => 1,
            Storage::SixBit => 3,
        }
    }
}

macro_rules! element_types {
    ($( $(#[$doc:meta])* $var:ident = $tag:literal, $tier:literal, $storage:expr; )*) => {
        /// An element type: one `type_tag` of `element-types.md` §2.
        ///
        /// `Private` tags (`0xF0`–`0xFE`) are sized through the descriptor's
        /// extension-type section; `Unknown` only appears when decoding in permissive
        /// mode and its data must never be interpreted.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ElementType {
            $( $(#[$doc])* $var, )*
            /// Implementation-private type `0xF0`–`0xFE`; see [`crate::ExtensionType`].
            Private(u8),
            /// A tag this implementation does not know (permissive decode only).
            Unknown(u8),
        }

        impl ElementType {
            /// Every public element type, in tag order.
            pub const ALL: &'static [ElementType] = &[$(ElementType::$var),*];

            /// The `type_tag` byte.
            pub fn tag(self) -> u8 {
                match self {
                    $(ElementType::$var => $tag,)*
                    ElementType::Private(t) | ElementType::Unknown(t) => t,
                }
            }

            /// The public type with this tag, `Private` for `0xF0`–`0xFE`, `None` otherwise.
            pub fn from_tag(tag: u8) -> Option<ElementType> {
                match tag {
                    $($tag => Some(ElementType::$var),)*
                    0xF0..=0xFE => Some(ElementType::Private(tag)),
                    _ => None,
                }
            }

            /// The language-neutral name the conformance manifest uses (`"float32"`,
            /// `"int4"`), from the one declaration ([`crate::tables::type_name`]): a
            /// private type renders as `"private(0xf3)"`, an unknown one as
            /// `"unknown(0x2a)"`, as in every language.
            pub fn name(self) -> &'static str {
                crate::tables::type_name(self.tag())
            }

            /// The public type with this spec name (`"float32"`); `None` for any other
            /// text, including the `private(..)`/`unknown(..)` renderings.
            pub fn from_name(name: &str) -> Option<ElementType> {
                crate::tables::element_type_named(name).and_then(|r| ElementType::from_tag(r.tag))
            }

            /// Tier 1 (every implementation) or 2 (optional); `None` for private/unknown.
            pub fn tier(self) -> Option<u8> {
                match self {
                    $(ElementType::$var => Some($tier),)*
                    _ => None,
                }
            }

            /// Storage of the public types; `None` for private (use the extension
            /// section) and unknown types.
            pub fn storage(self) -> Option<Storage> {
                match self {
                    $(ElementType::$var => Some($storage),)*
                    _ => None,
                }
            }
        }
    };
}

use Storage::{Bytes, Packed, SixBit};

element_types! {
    /// IEEE binary16.
    Float16 = 0x01, 1, Bytes(2);
    /// bfloat16 (upper half of a binary32).
    Bfloat16 = 0x02, 1, Bytes(2);
    /// IEEE binary32.
    Float32 = 0x03, 1, Bytes(4);
    /// IEEE binary64.
    Float64 = 0x04, 1, Bytes(8);
    /// Signed 8-bit integer.
    Int8 = 0x10, 1, Bytes(1);
    /// Unsigned 8-bit integer.
    Uint8 = 0x11, 1, Bytes(1);
    /// Signed 16-bit integer.
    Int16 = 0x12, 1, Bytes(2);
    /// Unsigned 16-bit integer.
    Uint16 = 0x13, 1, Bytes(2);
    /// Signed 32-bit integer.
    Int32 = 0x14, 1, Bytes(4);
    /// Unsigned 32-bit integer.
    Uint32 = 0x15, 1, Bytes(4);
    /// Signed 64-bit integer.
    Int64 = 0x16, 1, Bytes(8);
    /// Unsigned 64-bit integer.
    Uint64 = 0x17, 1, Bytes(8);
    /// Boolean, packed 8 per byte.
    Bool = 0x20, 1, Packed { bits: 1 };
    /// OCP OFP8 E4M3.
    Float8E4m3 = 0x40, 2, Bytes(1);
    /// OCP OFP8 E5M2.
    Float8E5m2 = 0x41, 2, Bytes(1);
    /// Unsigned power-of-two scale (MX block scale).
    Float8E8m0 = 0x42, 2, Bytes(1);
    /// OCP MX FP4, two per byte.
    Float4E2m1 = 0x43, 2, Packed { bits: 4 };
    /// OCP MX FP6 E2M3, four per 3 bytes.
    Float6E2m3 = 0x44, 2, SixBit;
    /// OCP MX FP6 E3M2, four per 3 bytes.
    Float6E3m2 = 0x45, 2, SixBit;
    /// IEEE binary128.
    Float128 = 0x46, 2, Bytes(16);
    /// Signed 4-bit integer, two per byte.
    Int4 = 0x48, 2, Packed { bits: 4 };
    /// Unsigned 4-bit integer, two per byte.
    Uint4 = 0x49, 2, Packed { bits: 4 };
    /// Signed 2-bit integer, four per byte.
    Int2 = 0x4A, 2, Packed { bits: 2 };
    /// Unsigned 2-bit integer, four per byte.
    Uint2 = 0x4B, 2, Packed { bits: 2 };
    /// Two float32 (real, imaginary).
    Complex64 = 0x50, 2, Bytes(8);
    /// Two float64 (real, imaginary).
    Complex128 = 0x51, 2, Bytes(16);
}

impl ElementType {
    /// True for `Private` tags `0xF0`–`0xFE`.
    pub fn is_private(self) -> bool {
        matches!(self, ElementType::Private(_))
    }
}

impl std::fmt::Display for ElementType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_names_are_unique() {
        for &t in ElementType::ALL {
            assert_eq!(ElementType::from_tag(t.tag()), Some(t));
            assert_eq!(ElementType::from_name(t.name()), Some(t));
        }
        assert_eq!(ElementType::ALL.len(), 26);
        for bad in [0x00, 0x05, 0x47, 0x80, 0xEF, 0xFF] {
            assert_eq!(ElementType::from_tag(bad), None, "tag {bad:#x}");
        }
        assert_eq!(
            ElementType::from_tag(0xF3),
            Some(ElementType::Private(0xF3))
        );
    }

    #[test]
    fn contiguous_sizes_follow_section_7() {
        use ElementType::*;
        let size = |t: ElementType, n| t.storage().unwrap().bytes_for(n).unwrap();
        assert_eq!(size(Bool, 10), 2);
        assert_eq!(size(Bool, 1), 1);
        assert_eq!(size(Int4, 16384), 8192);
        assert_eq!(size(Uint4, 3), 2);
        assert_eq!(size(Uint2, 5), 2);
        assert_eq!(size(Float6E2m3, 1), 3);
        assert_eq!(size(Float6E3m2, 4), 3);
        assert_eq!(size(Float6E3m2, 5), 6);
        assert_eq!(size(Complex128, 3), 48);
        assert_eq!(size(Float32, 0), 0);
        assert_eq!(Float64.storage().unwrap().bytes_for(u64::MAX / 4), None);
    }
}
