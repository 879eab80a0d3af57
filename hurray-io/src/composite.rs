//! Composite validation (`layouts.md` §2.11, `streams-and-transport.md` A.4):
//! per-member checks as each member arrives, and close-time checks at the last one.
//! Shared by the stream and file readers, and by the writers (which validate a whole
//! composite before emitting a byte of it).
//!
//! # Cost on hostile input
//!
//! A head's `member_count` is checked against [`Limits::max_composite_members`]
//! (`Limit`, at the head) before any member is read, so a checker never holds more
//! than that many boxes. The close-time partition check is then:
//!
//! 1. the volume sum (linear): members must hold exactly as many elements as the head;
//! 2. the non-overlap test, a sweep instead of all pairs: boxes are sorted by their
//!    start along one dimension (ties by their whole start vector), and each box is
//!    compared only with the earlier boxes whose interval along that dimension is
//!    still open at its start (the *active* set, pruned as the sweep advances). Every
//!    overlapping pair is found: of two overlapping boxes, the earlier one is still
//!    open when the later one starts.
//!
//! The sweep dimension is the one with the fewest such comparisons, which is computed
//! exactly (up to ties) in `O(n log n)` per dimension before sweeping. A partition
//! split along one dimension costs no comparison at all; a grid of `g₀ × g₁ × …` boxes
//! costs at most `n · n / max gₖ` (each box meets the earlier boxes of its own slab).
//! Contrived layouts (long boxes crossing every dimension's slabs) can still cost
//! `O(n²)` comparisons, which the member limit bounds: at the default limit, 65 536
//! members laid out as a two-dimensional pinwheel (half tall columns, half wide rows)
//! cost 5.4·10⁸ comparisons, about a second in a release build.
//!
//! # Zero-volume members (`layouts.md` §1.8, A-G6)
//!
//! The overlap predicate is applied literally, as §1.8 states it: boxes A and B
//! overlap iff `A.off[k] < B.off[k] + B.shape[k]` and `B.off[k] < A.off[k] +
//! A.shape[k]` for every k. A-G6 notes that a zero-volume box lying strictly inside
//! another box satisfies it; this implementation rejects such a partition (readers
//! and writers alike). A zero-volume box on a face of another box, or outside every
//! other box, does not overlap: an empty tensor split into empty shards, or an empty
//! shard at the end of an axis, is accepted.
//!
//! [`Limits::max_composite_members`]: crate::Limits::max_composite_members

use crate::error::{Error, FormatRule, Result};
use crate::tensor::{Composite, Item};
use hurray_core::{CompositionRule, Layout, MemberRole, TensorDescriptor};

/// Incremental checker for one composite level.
///
/// Reading of the spec's open points: the decoded type of a quantized member is not
/// a field (A-C2), so only unquantized partition/overlay members are held to the
/// head's `type_tag`, a nested partition/overlay head included (its `type_tag` is
/// its decoded type) but not a nested group head (its type is advisory); group
/// members are free (A-C1). Zero-volume partition members:
/// see the [module documentation](self).
pub struct CompositeChecker {
    rule: CompositionRule,
    head_shape: Vec<u64>,
    head_type: hurray_core::ElementType,
    member_count: u32,
    seen: u32,
    /// Partition members' boxes, `head_shape.len()` coordinates per box: box `i`
    /// spans `starts[i·r + k] .. ends[i·r + k]` along dimension `k`.
    starts: Vec<u64>,
    ends: Vec<u64>,
}

fn err(offset: u64, detail: impl std::fmt::Display) -> Error {
    Error::format(FormatRule::CompositeMember, offset, detail)
}

impl CompositeChecker {
    /// Starts checking the composite whose head is `head` (found at `at`), which may
    /// have at most `max_members` members ([`Limits::max_composite_members`]).
    ///
    /// Errors: `Limit` (at `at`) when the head declares more than `max_members`
    /// members, before any member is looked at; `CompositeMember` for an overlay with
    /// `member_count = 0` (no base).
    ///
    /// [`Limits::max_composite_members`]: crate::Limits::max_composite_members
    pub fn new(head: &TensorDescriptor, at: u64, max_members: u32) -> Result<CompositeChecker> {
        let Layout::CompositeHead(h) = &head.layout else {
            return Err(err(at, "not a composite head"));
        };
        if h.member_count > max_members {
            return Err(Error::format(
                FormatRule::Limit,
                at,
                format_args!(
                    "composite head declares {} members; the limit is {max_members}",
                    h.member_count
                ),
            ));
        }
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
            starts: Vec::new(),
            ends: Vec::new(),
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
            // A nested partition/overlay head's type_tag is its decoded type and is
            // held to the rule like any member's; a nested group's (or private
            // rule's) type is advisory (§2.11), so it has no decoded type to check.
            let typed = match &m.layout {
                Layout::CompositeHead(h) => matches!(
                    h.rule,
                    CompositionRule::Partition | CompositionRule::Overlay
                ),
                _ => true,
            };
            if m.quantization.is_none() && typed && m.element_type != self.head_type {
                return Err(err(
                    at,
                    format_args!(
                        "member {i} has type {} but the head has {}",
                        m.element_type, self.head_type
                    ),
                ));
            }
            let rank = self.head_shape.len();
            if m.shape.len() != rank || s.offset.len() != rank {
                return Err(err(
                    at,
                    format_args!("member {i} does not have the head's rank {rank}"),
                ));
            }
            if self.rule == CompositionRule::Partition {
                for (&o, &n) in s.offset.iter().zip(&m.shape) {
                    self.starts.push(o);
                    self.ends.push(o.saturating_add(n));
                }
            }
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
    /// partition's members do not hold exactly the head's number of elements
    /// (checked first, in linear time), or when two of them overlap (the sweep of the
    /// [module documentation](self)).
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
        if self.rule != CompositionRule::Partition {
            return Ok(());
        }
        let boxes = Boxes {
            rank: self.head_shape.len(),
            count: self.seen as usize,
            starts: &self.starts,
            ends: &self.ends,
        };
        let total = volume(self.head_shape.iter().copied())
            .ok_or_else(|| err(at, "head volume overflows"))?;
        let mut sum = 0u128;
        for i in 0..boxes.len() {
            let v = volume(boxes.extents(i)).ok_or_else(|| err(at, "member volume overflows"))?;
            sum = sum
                .checked_add(v)
                .ok_or_else(|| err(at, "volume overflows"))?;
        }
        if sum != total {
            return Err(err(
                at,
                format_args!(
                    "partition members hold {sum} elements but the head has {total} \
                     (a gap or an overlap)"
                ),
            ));
        }
        if let Some((i, j)) = boxes.sweep().overlap {
            return Err(err(
                at,
                format_args!("partition members {i} and {j} overlap"),
            ));
        }
        Ok(())
    }
}

/// Product of `extents`, or `None` on overflow.
fn volume(mut extents: impl Iterator<Item = u64>) -> Option<u128> {
    extents.try_fold(1u128, |a, d| a.checked_mul(u128::from(d)))
}

/// Partition boxes in the flat form [`CompositeChecker`] keeps them in.
struct Boxes<'a> {
    rank: usize,
    /// Number of boxes (`starts.len() / rank`, except for scalars).
    count: usize,
    starts: &'a [u64],
    ends: &'a [u64],
}

/// What a sweep found, and what it cost.
struct Sweep {
    /// Two overlapping members (in member order), if any.
    overlap: Option<(usize, usize)>,
    /// Pairs of boxes the sweep tested for overlap (read by the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    comparisons: u64,
}

impl Boxes<'_> {
    fn len(&self) -> usize {
        self.count
    }

    fn start(&self, i: usize) -> &[u64] {
        &self.starts[i * self.rank..(i + 1) * self.rank]
    }

    fn end(&self, i: usize) -> &[u64] {
        &self.ends[i * self.rank..(i + 1) * self.rank]
    }

    fn extents(&self, i: usize) -> impl Iterator<Item = u64> + '_ {
        self.start(i).iter().zip(self.end(i)).map(|(&s, &e)| e - s)
    }

    /// The §1.8 overlap predicate, literally (so a zero-volume box strictly inside
    /// another overlaps it; see the module documentation).
    fn overlap(&self, a: usize, b: usize) -> bool {
        let (sa, ea, sb, eb) = (self.start(a), self.end(a), self.start(b), self.end(b));
        (0..self.rank).all(|k| sa[k] < eb[k] && sb[k] < ea[k])
    }

    /// Comparisons a sweep along dimension `k` makes when no box overlaps: for each
    /// box, the earlier boxes (in start order) still open at its start.
    fn sweep_cost(&self, k: usize) -> u128 {
        let n = self.len();
        let mut starts: Vec<u64> = (0..n).map(|i| self.starts[i * self.rank + k]).collect();
        let mut ends: Vec<u64> = (0..n).map(|i| self.ends[i * self.rank + k]).collect();
        starts.sort_unstable();
        ends.sort_unstable();
        let mut closed = 0;
        let mut cost = 0u128;
        for (before, &x) in starts.iter().enumerate() {
            while closed < n && ends[closed] <= x {
                closed += 1;
            }
            cost += before.saturating_sub(closed) as u128;
        }
        cost
    }

    /// Finds an overlapping pair, if there is one (see the module documentation).
    fn sweep(&self) -> Sweep {
        let n = self.len();
        if self.rank == 0 {
            // Every scalar box contains the one index: any two overlap.
            let overlap = (n >= 2).then_some((0, 1));
            return Sweep {
                overlap,
                comparisons: u64::from(n >= 2),
            };
        }
        let k = (0..self.rank)
            .min_by_key(|&k| self.sweep_cost(k))
            .unwrap_or(0);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_unstable_by(|&a, &b| {
            (self.start(a)[k], self.start(a), a).cmp(&(self.start(b)[k], self.start(b), b))
        });
        let mut active: Vec<usize> = Vec::new();
        let mut comparisons = 0u64;
        for &i in &order {
            let x = self.start(i)[k];
            // Boxes closed along k before `x` cannot reach `i` or any later box.
            active.retain(|&j| self.end(j)[k] > x);
            for &j in &active {
                comparisons += 1;
                if self.overlap(i, j) {
                    return Sweep {
                        overlap: Some((i.min(j), i.max(j))),
                        comparisons,
                    };
                }
            }
            active.push(i);
        }
        Sweep {
            overlap: None,
            comparisons,
        }
    }
}

/// Validates a whole composite tree (what a writer does before emitting it).
///
/// Errors: any per-member or close-time rule; `Limit` when a head declares more than
/// `max_members` members; `CompositeDepth` when nested deeper than `max_depth` levels
/// (the outermost head counts as 1).
pub fn validate(c: &Composite, max_depth: u32, max_members: u32) -> Result<()> {
    validate_at(c, 1, max_depth, max_members)
}

fn validate_at(c: &Composite, depth: u32, max_depth: u32, max_members: u32) -> Result<()> {
    if depth > max_depth {
        return Err(Error::format(
            FormatRule::CompositeDepth,
            0,
            format_args!("composites nested deeper than {max_depth} levels"),
        ));
    }
    let mut chk = CompositeChecker::new(c.head.descriptor(), 0, max_members)?;
    for m in &c.members {
        chk.member(m.descriptor(), 0)?;
        if let Item::Composite(inner) = m {
            validate_at(inner, depth + 1, max_depth, max_members)?;
        }
    }
    chk.close(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A head descriptor: `rule` over `n` members, shape [4], element type `t`.
    fn head_of(rule: CompositionRule, t: hurray_core::ElementType, n: u32) -> TensorDescriptor {
        let mut d = TensorDescriptor::dense(t, &[4]).unwrap();
        d.layout = Layout::CompositeHead(hurray_core::CompositeHead {
            rule,
            combine_op: hurray_core::CombineOp::None,
            member_count: n,
        });
        d.buffers.clear();
        d
    }

    #[test]
    fn a_nested_partition_head_is_held_to_the_type_rule_a_nested_group_is_not() {
        use hurray_core::ElementType::{Float32, Float64};
        for (inner_rule, ok) in [
            (CompositionRule::Partition, false),
            (CompositionRule::Group, true),
        ] {
            let mut inner = head_of(inner_rule, Float32, 1);
            inner.shard = Some(hurray_core::Shard {
                parent_shape: vec![4],
                offset: vec![0],
            });
            let mut chk =
                CompositeChecker::new(&head_of(CompositionRule::Partition, Float64, 1), 0, 16)
                    .unwrap();
            let r = chk.member(&inner, 0);
            assert_eq!(r.is_ok(), ok, "{inner_rule:?}: {r:?}");
            if let Err(e) = r {
                assert!(
                    e.to_string()
                        .contains("member 0 has type float32 but the head has float64"),
                    "{e}"
                );
            }
        }
    }
    use crate::limits::Limits;
    use hurray_core::{CombineOp, CompositeHead, ElementType, Shard};

    fn head(shape: &[u64], rule: CompositionRule, n: u32) -> TensorDescriptor {
        let mut d = TensorDescriptor::dense(ElementType::Float32, shape).unwrap();
        d.layout = Layout::CompositeHead(CompositeHead {
            rule,
            combine_op: CombineOp::None,
            member_count: n,
        });
        d.buffers.clear();
        d
    }

    fn member(parent: &[u64], offset: &[u64], shape: &[u64]) -> TensorDescriptor {
        let mut d = TensorDescriptor::dense(ElementType::Float32, shape).unwrap();
        d.shard = Some(Shard {
            parent_shape: parent.to_vec(),
            offset: offset.to_vec(),
        });
        d
    }

    /// Runs the checker over a partition of `parent` made of `(offset, shape)` boxes.
    fn check(parent: &[u64], boxes: &[(Vec<u64>, Vec<u64>)]) -> Result<()> {
        let h = head(parent, CompositionRule::Partition, boxes.len() as u32);
        let mut c = CompositeChecker::new(&h, 0, u32::MAX)?;
        for (o, s) in boxes {
            c.member(&member(parent, o, s), 0)?;
        }
        c.close(0)
    }

    /// The sweep over raw `(offset, shape)` boxes of rank `rank`.
    fn sweep(rank: usize, boxes: &[(Vec<u64>, Vec<u64>)]) -> Sweep {
        let starts: Vec<u64> = boxes.iter().flat_map(|b| b.0.clone()).collect();
        let ends: Vec<u64> = boxes
            .iter()
            .flat_map(|b| b.0.iter().zip(&b.1).map(|(o, s)| o + s).collect::<Vec<_>>())
            .collect();
        Boxes {
            rank,
            count: boxes.len(),
            starts: &starts,
            ends: &ends,
        }
        .sweep()
    }

    /// All pairs, the reference the sweep must agree with.
    fn any_overlap(boxes: &[(Vec<u64>, Vec<u64>)]) -> bool {
        let ov = |a: &(Vec<u64>, Vec<u64>), b: &(Vec<u64>, Vec<u64>)| {
            (0..a.0.len()).all(|k| a.0[k] < b.0[k] + b.1[k] && b.0[k] < a.0[k] + a.1[k])
        };
        (0..boxes.len()).any(|i| (i + 1..boxes.len()).any(|j| ov(&boxes[i], &boxes[j])))
    }

    fn b(o: &[u64], s: &[u64]) -> (Vec<u64>, Vec<u64>) {
        (o.to_vec(), s.to_vec())
    }

    fn rejected(r: Result<()>) -> bool {
        r.is_err_and(|e| e.rule() == Some(FormatRule::CompositeMember))
    }

    #[test]
    fn a_60k_member_split_along_one_axis_costs_no_comparison() {
        let n = 60_000u64;
        let boxes: Vec<_> = (0..n).rev().map(|i| b(&[i], &[1])).collect();
        let s = sweep(1, &boxes);
        assert_eq!((s.overlap, s.comparisons), (None, 0));
        assert!(check(&[n], &boxes).is_ok());
        // The same split along the second axis of a [1, n] head: the sweep picks it.
        let boxes: Vec<_> = (0..n).map(|i| b(&[0, i], &[1, 1])).collect();
        let s = sweep(2, &boxes);
        assert_eq!((s.overlap, s.comparisons), (None, 0));
        assert!(check(&[1, n], &boxes).is_ok());
    }

    #[test]
    fn a_grid_costs_at_most_one_slab_per_box() {
        // 240 x 250 = 60 000 boxes; each meets at most the earlier boxes of its slab
        // along the sweep dimension (the one with more slabs: 250 along dim 1).
        let (g0, g1) = (240u64, 250u64);
        let boxes: Vec<_> = (0..g0)
            .flat_map(|i| (0..g1).map(move |j| b(&[2 * i, 3 * j], &[2, 3])))
            .collect();
        let s = sweep(2, &boxes);
        assert_eq!(s.overlap, None);
        let n = g0 * g1;
        assert_eq!(s.comparisons, g1 * g0 * (g0 - 1) / 2);
        assert!(s.comparisons <= n * (n / g1.max(g0)));
        assert!(check(&[2 * g0, 3 * g1], &boxes).is_ok());
    }

    #[test]
    fn the_sweep_agrees_with_all_pairs() {
        // SplitMix64.
        let mut state = 0x1234_5678_u64;
        let mut next = move |n: u64| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) % n
        };
        let mut overlapping = 0;
        for _ in 0..20_000 {
            let rank = 1 + next(3) as usize;
            let count = 1 + next(7) as usize;
            let boxes: Vec<_> = (0..count)
                .map(|_| {
                    let o: Vec<u64> = (0..rank).map(|_| next(5)).collect();
                    // Zero-length extents included.
                    let s: Vec<u64> = (0..rank).map(|_| next(4)).collect();
                    (o, s)
                })
                .collect();
            let want = any_overlap(&boxes);
            let got = sweep(rank, &boxes);
            assert_eq!(got.overlap.is_some(), want, "{boxes:?}");
            if let Some((i, j)) = got.overlap {
                assert!(i < j);
                assert!(any_overlap(&[boxes[i].clone(), boxes[j].clone()]));
                overlapping += 1;
            }
        }
        assert!(overlapping > 1000, "the cases exercise overlaps");
    }

    #[test]
    fn overlaps_the_sweep_must_catch() {
        // Equal dim-0 intervals, overlapping in dim 1 only (the volume sum is right).
        let boxes = [b(&[0, 0], &[4, 5]), b(&[0, 3], &[4, 3])];
        assert!(rejected(check(&[4, 8], &boxes)));
        assert_eq!(sweep(2, &boxes).overlap, Some((0, 1)));
        // A box fully inside another (and a gap elsewhere making the sum right).
        let r = check(
            &[4, 4],
            &[
                b(&[0, 0], &[3, 3]),
                b(&[1, 1], &[1, 1]),
                b(&[3, 0], &[1, 4]),
                b(&[0, 3], &[2, 1]),
            ],
        );
        assert!(rejected(r));
        assert!(sweep(2, &[b(&[0, 0], &[3, 3]), b(&[1, 1], &[1, 1])])
            .overlap
            .is_some());
        // Identical boxes, and boxes overlapping only in the last of three dimensions.
        assert!(sweep(1, &[b(&[2], &[2]), b(&[2], &[2])]).overlap.is_some());
        let r = sweep(3, &[b(&[0, 0, 0], &[2, 2, 3]), b(&[0, 0, 2], &[2, 2, 2])]);
        assert_eq!(r.overlap, Some((0, 1)));
        // Long boxes crossing the sweep: a pinwheel whose overlap is found late.
        let mut boxes: Vec<_> = (0..50).map(|j| b(&[0, j], &[50, 1])).collect();
        boxes.extend((0..50).map(|i| b(&[i, 50], &[1, 50])));
        assert!(sweep(2, &boxes).overlap.is_none());
        boxes.push(b(&[49, 49], &[1, 2]));
        assert!(sweep(2, &boxes).overlap.is_some());
    }

    #[test]
    fn zero_volume_members_follow_the_literal_predicate() {
        // Strictly inside another box: overlaps (A-G6, read literally).
        assert!(rejected(check(&[8], &[b(&[0], &[8]), b(&[4], &[0])])));
        assert!(rejected(check(
            &[8, 8],
            &[b(&[0, 0], &[8, 8]), b(&[4, 2], &[0, 4])]
        )));
        // On a face, or at the end of an axis: no overlap.
        assert!(check(&[8], &[b(&[0], &[8]), b(&[0], &[0]), b(&[8], &[0])]).is_ok());
        assert!(check(&[8, 8], &[b(&[0, 0], &[8, 8]), b(&[8, 0], &[0, 8])]).is_ok());
        // Zero along an axis, strictly inside along it: that is "strictly inside".
        assert!(rejected(check(
            &[8, 8],
            &[b(&[0, 0], &[8, 8]), b(&[4, 0], &[0, 8])]
        )));
        // An empty head split into empty shards.
        assert!(check(&[0, 8], &[b(&[0, 0], &[0, 4]), b(&[0, 4], &[0, 4])]).is_ok());
        // Two zero-volume boxes at the same place: no k-interval strictly contains the
        // other's start, so they do not overlap.
        assert!(sweep(2, &[b(&[1, 1], &[0, 2]), b(&[1, 1], &[0, 2])])
            .overlap
            .is_none());
    }

    #[test]
    fn scalar_partitions_have_exactly_one_member() {
        assert!(check(&[], &[b(&[], &[])]).is_ok());
        assert!(rejected(check(&[], &[])));
        assert!(rejected(check(&[], &[b(&[], &[]), b(&[], &[])])));
        assert_eq!(sweep(0, &[b(&[], &[]), b(&[], &[])]).overlap, Some((0, 1)));
    }

    #[test]
    fn volume_is_checked_before_overlap() {
        // A gap and an overlap at once: the volume message, not a pair.
        let e = check(&[8], &[b(&[0], &[4]), b(&[2], &[1])]).unwrap_err();
        assert!(e.to_string().contains("hold 5 elements"), "{e}");
        let e = check(&[8], &[b(&[0], &[5]), b(&[3], &[3])]).unwrap_err();
        assert!(e.to_string().contains("members 0 and 1 overlap"), "{e}");
    }

    #[test]
    fn member_count_is_limited_at_the_head() {
        let limit = Limits::default().max_composite_members;
        for rule in [
            CompositionRule::Partition,
            CompositionRule::Overlay,
            CompositionRule::Group,
        ] {
            let ok = head(&[4], rule, limit);
            assert!(CompositeChecker::new(&ok, 7, limit).is_ok());
            let over = head(&[4], rule, limit + 1);
            let e = CompositeChecker::new(&over, 7, limit).err().unwrap();
            assert_eq!(e.rule(), Some(FormatRule::Limit));
            assert!(matches!(e, Error::Format { offset: 7, .. }));
        }
    }

    #[test]
    fn a_member_of_another_rank_is_rejected() {
        let h = head(&[4, 4], CompositionRule::Partition, 1);
        let mut c = CompositeChecker::new(&h, 0, 8).unwrap();
        let mut m = member(&[4, 4], &[0, 0], &[4, 4]);
        m.shape = vec![16];
        assert!(rejected(c.member(&m, 0)));
    }
}
