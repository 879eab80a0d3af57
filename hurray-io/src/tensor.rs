//! A tensor as the containers carry it: a decoded descriptor plus its buffers in
//! buffer-table order; and an [`Item`], which is a tensor or a composite (head plus
//! ordered members, nested).

use crate::buffer::Buffer;
use crate::error::{Error, FormatRule, Result};
use hurray_core::{Layout, TensorDescriptor};
use std::sync::Arc;

/// A descriptor with its buffers. Buffers are immutable shared views: cloning a
/// tensor never copies payload bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    descriptor: Arc<TensorDescriptor>,
    buffers: Vec<Buffer>,
}

impl Tensor {
    /// Pairs a descriptor with its buffers.
    ///
    /// Errors: `BufferMismatch` when the number of buffers differs from
    /// `buffer_count` or a buffer's length differs from its `byte_size`.
    pub fn new(
        descriptor: impl Into<Arc<TensorDescriptor>>,
        buffers: Vec<Buffer>,
    ) -> Result<Tensor> {
        let descriptor = descriptor.into();
        check_buffers(&descriptor, buffers.iter().map(Buffer::len))?;
        Ok(Tensor {
            descriptor,
            buffers,
        })
    }

    /// A row-major CPU tensor over `bytes` (copied into an aligned buffer).
    ///
    /// Errors: the descriptor error when the type or shape is invalid,
    /// `BufferMismatch` when `bytes` is not exactly the contiguous size.
    pub fn from_dense(
        element_type: hurray_core::ElementType,
        shape: &[u64],
        bytes: &[u8],
    ) -> Result<Tensor> {
        let d = TensorDescriptor::dense(element_type, shape)
            .map_err(|source| Error::Descriptor { at: 0, source })?;
        Tensor::new(d, vec![Buffer::copy_from(bytes)])
    }

    /// The decoded descriptor (borrowed).
    pub fn descriptor(&self) -> &TensorDescriptor {
        &self.descriptor
    }

    /// The shared descriptor.
    pub fn descriptor_arc(&self) -> &Arc<TensorDescriptor> {
        &self.descriptor
    }

    /// Buffers in buffer-table order (borrowed).
    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }

    /// Total payload bytes (sum of buffer sizes).
    pub fn data_len(&self) -> u64 {
        self.buffers.iter().map(|b| b.len() as u64).sum()
    }

    /// Splits into descriptor and buffers.
    pub fn into_parts(self) -> (Arc<TensorDescriptor>, Vec<Buffer>) {
        (self.descriptor, self.buffers)
    }
}

/// Checks supplied buffer lengths against the buffer table.
pub(crate) fn check_buffers(
    d: &TensorDescriptor,
    lens: impl ExactSizeIterator<Item = usize>,
) -> Result<()> {
    if lens.len() != d.buffers.len() {
        return Err(Error::format(
            FormatRule::BufferMismatch,
            0,
            format_args!(
                "{} buffers supplied, the descriptor declares {}",
                lens.len(),
                d.buffers.len()
            ),
        ));
    }
    for (i, (len, h)) in lens.zip(&d.buffers).enumerate() {
        if len as u64 != h.byte_size {
            return Err(Error::format(
                FormatRule::BufferMismatch,
                0,
                format_args!(
                    "buffer {i} has {len} bytes, the descriptor declares {}",
                    h.byte_size
                ),
            ));
        }
    }
    Ok(())
}

/// A composite: its head (which owns no data) and its members, in order. A member
/// may itself be a composite.
#[derive(Clone, Debug, PartialEq)]
pub struct Composite {
    /// The head tensor (`layout_tag 0x0B`, no buffers).
    pub head: Tensor,
    /// The members, in stream or file order.
    pub members: Vec<Item>,
}

/// What a container yields: a plain tensor or a whole composite.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A tensor that is not a composite head.
    Tensor(Tensor),
    /// A composite head with all of its members.
    Composite(Composite),
}

impl Item {
    /// The descriptor of the tensor, or of the composite's head.
    pub fn descriptor(&self) -> &TensorDescriptor {
        match self {
            Item::Tensor(t) => t.descriptor(),
            Item::Composite(c) => c.head.descriptor(),
        }
    }

    /// The tensor, if this is not a composite.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            Item::Tensor(t) => Some(t),
            Item::Composite(_) => None,
        }
    }

    /// Number of tensors in the item, heads included.
    pub fn tensor_count(&self) -> usize {
        match self {
            Item::Tensor(_) => 1,
            Item::Composite(c) => 1 + c.members.iter().map(Item::tensor_count).sum::<usize>(),
        }
    }

    /// Visits every tensor in pre-order (head, then members), the order containers use.
    pub fn for_each_tensor<'a>(&'a self, f: &mut impl FnMut(&'a Tensor)) {
        match self {
            Item::Tensor(t) => f(t),
            Item::Composite(c) => {
                f(&c.head);
                c.members.iter().for_each(|m| m.for_each_tensor(f));
            }
        }
    }
}

/// True when the descriptor is a composite head.
#[allow(dead_code)] // used by the stream and file readers
pub(crate) fn is_head(d: &TensorDescriptor) -> bool {
    matches!(d.layout, Layout::CompositeHead(_))
}
