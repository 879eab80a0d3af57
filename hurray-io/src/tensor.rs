//! A tensor as the containers carry it: a decoded descriptor plus its buffers in
//! buffer-table order; and an [`Item`], which is a tensor or a composite (head plus
//! ordered members, nested).

use crate::buffer::Buffer;
use crate::error::{Error, FormatRule, Result};
use hurray_core::{Layout, TensorDescriptor};
use std::sync::Arc;

/// A descriptor with its buffers. Buffers are immutable shared views: cloning a
/// tensor never copies payload bytes.
///
/// A tensor knows whether its buffer contents passed the content rules of
/// [`hurray_core::content`] (sparse indices, block tables, scales): every tensor a
/// strict reader hands out, and every tensor built with [`Tensor::new`], has; a
/// permissive reader's tensors may not have ([`Tensor::new_unvalidated`]), and
/// anything that interprets their index buffers calls
/// [`validate_content`](Tensor::validate_content) first.
#[derive(Clone, Debug)]
pub struct Tensor {
    descriptor: Arc<TensorDescriptor>,
    buffers: Vec<Buffer>,
    content_validated: bool,
}

impl PartialEq for Tensor {
    /// Same descriptor and same buffer bytes (validation state aside).
    fn eq(&self, other: &Tensor) -> bool {
        self.descriptor == other.descriptor && self.buffers == other.buffers
    }
}

impl Tensor {
    /// Pairs a descriptor with its buffers and checks the buffers' contents.
    ///
    /// Errors: `BufferMismatch` when the number of buffers differs from
    /// `buffer_count` or a buffer's length differs from its `byte_size`;
    /// [`Error::Content`] (offset inside the buffer) when the bytes break a content
    /// rule. The check costs one pass over index and parameter buffers, and nothing
    /// for a plain dense tensor.
    pub fn new(
        descriptor: impl Into<Arc<TensorDescriptor>>,
        buffers: Vec<Buffer>,
    ) -> Result<Tensor> {
        let t = Tensor::new_unvalidated(descriptor, buffers)?;
        t.check_content_at(&|_| 0)?;
        Ok(t.into_validated())
    }

    /// [`new`](Self::new) without the content check: for permissive readers and for
    /// callers that validate later. The tensor reports
    /// [`content_validated`](Self::content_validated) `false` (or `true` when the
    /// descriptor has no content rules) until [`validate_content`](Self::validate_content)
    /// is called on a copy.
    ///
    /// Errors: `BufferMismatch` as for [`new`](Self::new).
    pub fn new_unvalidated(
        descriptor: impl Into<Arc<TensorDescriptor>>,
        buffers: Vec<Buffer>,
    ) -> Result<Tensor> {
        let descriptor = descriptor.into();
        check_buffers(&descriptor, buffers.iter().map(Buffer::len))?;
        let content_validated = !hurray_core::content::has_content_rules(&descriptor);
        Ok(Tensor {
            descriptor,
            buffers,
            content_validated,
        })
    }

    /// True when the buffer contents are known to satisfy every content rule.
    pub fn content_validated(&self) -> bool {
        self.content_validated
    }

    /// Checks the buffer contents unless that was done already (then it is free).
    /// Call it before interpreting index buffers of a tensor from a permissive reader.
    ///
    /// Errors: [`Error::Content`], with the offset inside the offending buffer.
    pub fn validate_content(&self) -> Result<()> {
        if self.content_validated {
            return Ok(());
        }
        self.check_content_at(&|_| 0)
    }

    /// Runs the content check; `base(i)` is the absolute offset of buffer `i` in the
    /// input the tensor came from (0 when it came from memory).
    pub(crate) fn check_content_at(&self, base: &dyn Fn(usize) -> u64) -> Result<()> {
        if self.content_validated {
            return Ok(());
        }
        let slices: Vec<&[u8]> = self.buffers.iter().map(Buffer::as_slice).collect();
        hurray_core::content::check_content(&self.descriptor, &slices).map_err(|source| {
            Error::Content {
                at: base(source.buffer).saturating_add(source.offset),
                source,
            }
        })
    }

    /// Marks the contents as checked (after [`check_content_at`](Self::check_content_at)).
    pub(crate) fn into_validated(mut self) -> Tensor {
        self.content_validated = true;
        self
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
