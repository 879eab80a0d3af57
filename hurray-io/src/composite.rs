//! Composite validation (`layouts.md` §2.11, `streams-and-transport.md` A.4):
//! per-member checks as each member arrives, and close-time checks at the last one.
//! Shared by the stream and file readers, and by the writers (which validate a whole
//! composite before emitting a byte of it).

use crate::error::{Error, FormatRule, Result};
use crate::tensor::{Composite, Item};
use hurray_core::{CompositionRule, Layout, MemberRole, TensorDescriptor};

/// Incremental checker for one composite level.
///
/// Reading of the spec's open points: the decoded type of a quantized member is not
/// a field (A-C2), so only unquantized partition/overlay members are held to the
/// head's `type_tag`; group members are free (A-C1).
pub struct CompositeChecker {
    rule: CompositionRule,
    head_shape: Vec<u64>,
    head_type: hurray_core::ElementType,
    member_count: u32,
    seen: u32,
    boxes: Vec<(Vec<u64>, Vec<u64>)>,
}

fn err(offset: u64, detail: impl std::fmt::Display) -> Error {
    Error::format(FormatRule::CompositeMember, offset, detail)
}

impl CompositeChecker {
    /// Starts checking the composite whose head is `head` (found at `at`).
    ///
    /// Errors: `CompositeMember` for an overlay with `member_count = 0` (no base).
    pub fn new(head: &TensorDescriptor, at: u64) -> Result<CompositeChecker> {
        let Layout::CompositeHead(h) = &head.layout else {
            return Err(err(at, "not a composite head"));
        };
        if h.rule == CompositionRule::Overlay && h.member_count == 0 {
            return Err(err(
                at,
                "an overlay composite needs at least its base member (member_count = 0)",
            ));
        }
        Ok(CompositeChecker {
            rule: h.rule,
            head_shape: head.shape.clone(),
            head_type: head.element_type,
            member_count: h.member_count,
            seen: 0,
            boxes: Vec::new(),
        })
    }

    /// Members still expected.
    pub fn remaining(&self) -> u32 {
        self.member_count - self.seen
    }

    /// Checks the next member (for a nested composite, its head) found at `at`.
    pub fn member(&mut self, m: &TensorDescriptor, at: u64) -> Result<()> {
        if self.seen == self.member_count {
            return Err(err(at, "more members than member_count"));
        }
        let i = self.seen;
        self.seen += 1;
        let spatial = matches!(
            self.rule,
            CompositionRule::Partition | CompositionRule::Overlay
        );
        if spatial {
            let Some(s) = &m.shard else {
                return Err(err(
                    at,
                    format_args!(
                        "member {i} of a partition/overlay composite has no shard section"
                    ),
                ));
            };
            if s.parent_shape != self.head_shape {
                return Err(err(
                    at,
                    format_args!(
                        "member {i} parent_shape {:?} differs from the head shape {:?}",
                        s.parent_shape, self.head_shape
                    ),
                ));
            }
            if m.quantization.is_none()
                && !matches!(m.layout, Layout::CompositeHead(_))
                && m.element_type != self.head_type
            {
                return Err(err(
                    at,
                    format_args!(
                        "member {i} has type {} but the head has {}",
                        m.element_type, self.head_type
                    ),
                ));
            }
            self.boxes.push((s.offset.clone(), m.shape.clone()));
        }
        match (self.rule, m.composite_member) {
            (CompositionRule::Overlay, None) => {
                return Err(err(
                    at,
                    format_args!("overlay member {i} has no composite-member section"),
                ))
            }
            (CompositionRule::Overlay, Some(role)) => {
                let s = m.shard.as_ref().expect("checked above");
                if i == 0 {
                    let spans = role == MemberRole::Base
                        && s.offset.iter().all(|&o| o == 0)
                        && m.shape == self.head_shape;
                    if !spans {
                        return Err(err(
                            at,
                            "overlay member 0 must be a base spanning the whole head",
                        ));
                    }
                } else if role != MemberRole::Correction {
                    return Err(err(
                        at,
                        format_args!("overlay member {i} must be a correction"),
                    ));
                }
            }
            (_, Some(_)) => {
                return Err(err(
                    at,
                    format_args!(
                        "member {i} of a partition or group composite sets HAS_COMPOSITE_MEMBER"
                    ),
                ))
            }
            (_, None) => {}
        }
        Ok(())
    }

    /// Close-time checks after the last member (`at` = end of the composite).
    ///
    /// Errors: `TornComposite` when members are missing; `CompositeMember` when a
    /// partition's boxes overlap or leave a gap.
    pub fn close(&self, at: u64) -> Result<()> {
        if self.seen != self.member_count {
            return Err(Error::format(
                FormatRule::TornComposite,
                at,
                format_args!(
                    "composite ended after {} of {} members",
                    self.seen, self.member_count
                ),
            ));
        }
        if self.rule == CompositionRule::Partition {
            let volume = |shape: &[u64]| {
                shape
                    .iter()
                    .try_fold(1u128, |a, &d| a.checked_mul(u128::from(d)))
            };
            let total = volume(&self.head_shape).ok_or_else(|| err(at, "head volume overflows"))?;
            let mut sum = 0u128;
            for (_, shape) in &self.boxes {
                sum = sum
                    .checked_add(volume(shape).ok_or_else(|| err(at, "member volume overflows"))?)
                    .ok_or_else(|| err(at, "volume overflows"))?;
            }
            for (i, a) in self.boxes.iter().enumerate() {
                for (j, b) in self.boxes.iter().enumerate().skip(i + 1) {
                    let overlap = (0..self.head_shape.len())
                        .all(|k| a.0[k] < b.0[k] + b.1[k] && b.0[k] < a.0[k] + a.1[k]);
                    if overlap {
                        return Err(err(
                            at,
                            format_args!("partition members {i} and {j} overlap"),
                        ));
                    }
                }
            }
            if sum != total {
                return Err(err(
                    at,
                    format_args!("partition members cover {sum} of the head's {total} elements"),
                ));
            }
        }
        Ok(())
    }
}

/// Validates a whole composite tree (what a writer does before emitting it).
///
/// Errors: any per-member or close-time rule, or `CompositeDepth` when nested deeper
/// than `max_depth` levels (the outermost head counts as 1).
pub fn validate(c: &Composite, max_depth: u32) -> Result<()> {
    validate_at(c, 1, max_depth)
}

fn validate_at(c: &Composite, depth: u32, max_depth: u32) -> Result<()> {
    if depth > max_depth {
        return Err(Error::format(
            FormatRule::CompositeDepth,
            0,
            format_args!("composites nested deeper than {max_depth} levels"),
        ));
    }
    let mut chk = CompositeChecker::new(c.head.descriptor(), 0)?;
    for m in &c.members {
        chk.member(m.descriptor(), 0)?;
        if let Item::Composite(inner) = m {
            validate_at(inner, depth + 1, max_depth)?;
        }
    }
    chk.close(0)
}
