//! A decoded descriptor as a Java `dev.hurray.Descriptor`, built in this one place
//! from the descriptor's hurray-core model (`HurrayDescriptor::model`) and the
//! library's data-shaped section structs (`HurrayQuantization::from(&Quantization)`,
//! ...): each section is a typed Java record made by its constructor, so neither
//! side reads fields by position. No C call, no re-decoding.

use std::sync::OnceLock;

use hurray_core::{Layout, MemberRole, TileOrder, Tiling, VERSION_MAJOR};
use hurray_ffi::{
    HurrayBlockPaged, HurrayBufferEntry, HurrayCompositeHead, HurrayDescriptor, HurrayQuantization,
    HurrayStatistics,
};
use jni::objects::{GlobalRef, JMethodID, JObject, JValue};
use jni::signature::{JavaType, Primitive, TypeSignature};
use jni::sys::jvalue;
use jni::JNIEnv;

use crate::convert::new_longs;
use crate::errors::{Fail, R};

/// A Java class and its constructor, looked up once (global reference and method
/// id kept for the life of the library: the lookups cost more than the object).
pub(crate) struct Ctor {
    class: GlobalRef,
    id: JMethodID,
    /// The constructor's parameter types, parsed from its signature, so every call
    /// is checked against them before the unchecked JNI call.
    params: Vec<JavaType>,
}

impl Ctor {
    fn lookup(env: &mut JNIEnv, name: &str, sig: &str) -> R<Ctor> {
        let class = env.find_class(name)?;
        let id = env.get_method_id(&class, "<init>", sig)?;
        let global = env.new_global_ref(&class)?;
        env.delete_local_ref(class)?;
        let params = TypeSignature::from_str(sig)?.args;
        Ok(Ctor {
            class: global,
            id,
            params,
        })
    }

    /// A new object made by the constructor with `args`.
    ///
    /// Errors: the arguments do not match the constructor's parameter types (a bug
    /// here, reported as an exception rather than undefined behaviour); the
    /// constructor threw.
    pub(crate) fn make<'l>(&self, env: &mut JNIEnv<'l>, args: &[JValue]) -> R<JObject<'l>> {
        let fits = args.len() == self.params.len()
            && args.iter().zip(&self.params).all(|(a, t)| fits(a, t));
        if !fits {
            return Err(Fail::Arg(format!(
                "internal: constructor arguments do not match {:?}",
                self.params
            )));
        }
        let raw: Vec<jvalue> = args.iter().map(JValue::as_jni).collect();
        // SAFETY: `id` is the constructor of `class` (both looked up together in
        // `lookup`), and `args` were just checked, one by one, against the parameter
        // types parsed from the signature that `id` was looked up with.
        Ok(unsafe { env.new_object_unchecked(&self.class, self.id, &raw) }?)
    }
}

/// Whether a JNI value can be passed for a parameter of type `t`.
fn fits(a: &JValue, t: &JavaType) -> bool {
    matches!(
        (a, t),
        (JValue::Object(_), JavaType::Object(_) | JavaType::Array(_))
            | (JValue::Bool(_), JavaType::Primitive(Primitive::Boolean))
            | (JValue::Byte(_), JavaType::Primitive(Primitive::Byte))
            | (JValue::Char(_), JavaType::Primitive(Primitive::Char))
            | (JValue::Short(_), JavaType::Primitive(Primitive::Short))
            | (JValue::Int(_), JavaType::Primitive(Primitive::Int))
            | (JValue::Long(_), JavaType::Primitive(Primitive::Long))
            | (JValue::Float(_), JavaType::Primitive(Primitive::Float))
            | (JValue::Double(_), JavaType::Primitive(Primitive::Double))
    )
}

/// The Java classes a descriptor is made of, with their constructors.
pub(crate) struct Classes {
    pub(crate) descriptor: Ctor,
    pub(crate) buffer_entry: Ctor,
    pub(crate) quantization: Ctor,
    pub(crate) statistics: Ctor,
    pub(crate) composite_head: Ctor,
    pub(crate) shard: Ctor,
    pub(crate) tile_level: Ctor,
    pub(crate) block_paged: Ctor,
}

/// The classes of [`Classes`], looked up on first use.
pub(crate) fn classes(env: &mut JNIEnv) -> R<&'static Classes> {
    static CLASSES: OnceLock<Classes> = OnceLock::new();
    if let Some(c) = CLASSES.get() {
        return Ok(c);
    }
    let c = Classes {
        descriptor: Ctor::lookup(
            env,
            "dev/hurray/Descriptor",
            concat!(
                "([BIIIIIJ[J[Ldev/hurray/Descriptor$BufferEntry;[JZJ",
                "Ldev/hurray/Descriptor$Quantization;Ldev/hurray/Descriptor$Statistics;I",
                "Ldev/hurray/Descriptor$CompositeHead;ILdev/hurray/Descriptor$Shard;",
                "[Ldev/hurray/Descriptor$TileLevel;[J[J[JLdev/hurray/Descriptor$BlockPaged;)V"
            ),
        )?,
        buffer_entry: Ctor::lookup(env, "dev/hurray/Descriptor$BufferEntry", "(JIIII)V")?,
        quantization: Ctor::lookup(env, "dev/hurray/Descriptor$Quantization", "(IFIIIIIII)V")?,
        statistics: Ctor::lookup(env, "dev/hurray/Descriptor$Statistics", "(IJDDDDDDIIZZ)V")?,
        composite_head: Ctor::lookup(env, "dev/hurray/Descriptor$CompositeHead", "(III)V")?,
        shard: Ctor::lookup(env, "dev/hurray/Descriptor$Shard", "([J[J)V")?,
        tile_level: Ctor::lookup(env, "dev/hurray/Descriptor$TileLevel", "(II[J[J[J)V")?,
        block_paged: Ctor::lookup(env, "dev/hurray/Descriptor$BlockPaged", "(JIIIIII)V")?,
    };
    Ok(CLASSES.get_or_init(|| c))
}

/// `v` as a Java `long[]` (u64 bits reinterpreted), or null for `None`.
fn longs_or_null<'l, T: Copy + Into<u64>>(env: &mut JNIEnv<'l>, v: Option<&[T]>) -> R<JObject<'l>> {
    Ok(match v {
        Some(v) => {
            let v: Vec<i64> = v.iter().map(|&x| x.into() as i64).collect();
            new_longs(env, &v)?.into()
        }
        None => JObject::null(),
    })
}

/// A Java `T[]` of `items`, each made by `make`.
fn array_of<'l, T>(
    env: &mut JNIEnv<'l>,
    class: &Ctor,
    items: &[T],
    mut make: impl FnMut(&mut JNIEnv<'l>, &T) -> R<JObject<'l>>,
) -> R<JObject<'l>> {
    let a = env.new_object_array(items.len() as i32, &class.class, JObject::null())?;
    for (i, it) in items.iter().enumerate() {
        let o = make(env, it)?;
        env.set_object_array_element(&a, i as i32, &o)?;
        env.delete_local_ref(o)?;
    }
    Ok(a.into())
}

/// A tile order's byte (`TILED` 4: the next level is the tile's own tiling) and its
/// strides (`rank` zeros unless strided), as `Descriptor.TileLevel` carries them.
fn order(o: &TileOrder, rank: usize) -> (i32, Vec<i64>) {
    match o {
        TileOrder::RowMajor => (1, vec![0; rank]),
        TileOrder::ColumnMajor => (2, vec![0; rank]),
        TileOrder::Strided(s) => (3, s.clone()),
        TileOrder::Tiled(_) => (4, vec![0; rank]),
    }
}

/// The levels of a tiling, outermost first.
fn levels(t: &Tiling) -> Vec<&Tiling> {
    let mut levels = vec![t];
    while let TileOrder::Tiled(next) = &levels[levels.len() - 1].inner {
        levels.push(next);
    }
    levels
}

/// The Java `Descriptor` of `d`: its canonical bytes and every field, typed.
pub(crate) fn java_descriptor<'l>(env: &mut JNIEnv<'l>, d: &HurrayDescriptor) -> R<JObject<'l>> {
    let c = classes(env)?;
    let m = d.model();
    let rank = m.shape.len();
    let bytes: JObject = env.byte_array_from_slice(d.bytes())?.into();
    let shape = longs_or_null(env, Some(&m.shape))?;
    let buffers = array_of(env, &c.buffer_entry, &m.buffers, |env, b| {
        let e = HurrayBufferEntry::from(b);
        c.buffer_entry.make(
            env,
            &[
                JValue::Long(e.byte_size as i64),
                JValue::Int(e.alignment as i32),
                JValue::Int(i32::from(e.device_tag)),
                JValue::Int(i32::from(e.sync_mode)),
                JValue::Int(i32::from(e.memory_class)),
            ],
        )
    })?;
    let strides = match &m.layout {
        Layout::Strided { strides } => new_longs(env, strides)?.into(),
        _ => JObject::null(),
    };
    let nnz = match &m.layout {
        Layout::Coo { nnz, .. }
        | Layout::Csr { nnz }
        | Layout::Csc { nnz }
        | Layout::Csf { nnz, .. } => Some(*nnz),
        _ => None,
    };
    let quantization = match m.quantization.as_ref().map(HurrayQuantization::from) {
        Some(q) => c.quantization.make(
            env,
            &[
                JValue::Int(i32::from(q.scheme_tag)),
                JValue::Float(q.scale),
                JValue::Int(q.zero_point),
                JValue::Int(q.axis as i32),
                JValue::Int(q.block_size as i32),
                JValue::Int(q.scale_buffer_index as i32),
                // HURRAY_NO_BUFFER (u32::MAX) is Java's NO_BUFFER (-1).
                JValue::Int(q.zero_point_buffer_index as i32),
                JValue::Int(i32::from(q.scale_type_tag)),
                JValue::Int(i32::from(q.flags)),
            ],
        )?,
        None => JObject::null(),
    };
    let statistics = match m.statistics.as_ref().map(HurrayStatistics::from) {
        Some(s) => c.statistics.make(
            env,
            &[
                JValue::Int(s.computed_mask as i32),
                JValue::Long(s.nnz as i64),
                JValue::Double(s.sparsity_ratio),
                JValue::Double(s.value_min),
                JValue::Double(s.value_max),
                JValue::Double(s.value_abs_max),
                JValue::Double(s.value_mean),
                JValue::Double(s.value_stddev),
                JValue::Int(i32::from(s.nm_n)),
                JValue::Int(i32::from(s.nm_m)),
                JValue::Bool(u8::from(s.has_nan != 0)),
                JValue::Bool(u8::from(s.has_inf != 0)),
            ],
        )?,
        None => JObject::null(),
    };
    let coo_sorted = match &m.layout {
        Layout::Coo { is_sorted, .. } => i32::from(*is_sorted),
        _ => -1,
    };
    let head = match &m.layout {
        Layout::CompositeHead(h) => {
            let h = HurrayCompositeHead::from(h);
            c.composite_head.make(
                env,
                &[
                    JValue::Int(h.member_count as i32),
                    JValue::Int(i32::from(h.composition_rule)),
                    JValue::Int(i32::from(h.combine_op)),
                ],
            )?
        }
        _ => JObject::null(),
    };
    let member_role = match m.composite_member {
        Some(MemberRole::Correction) => 0,
        Some(MemberRole::Base) => 1,
        None => -1,
    };
    let shard = match &m.shard {
        Some(s) => {
            let parent = longs_or_null(env, Some(&s.parent_shape))?;
            let offset = longs_or_null(env, Some(&s.offset))?;
            c.shard
                .make(env, &[JValue::Object(&parent), JValue::Object(&offset)])?
        }
        None => JObject::null(),
    };
    let tiling = match &m.layout {
        Layout::Tiled(t) => array_of(env, &c.tile_level, &levels(t), |env, l| {
            let (outer, outer_strides) = order(&l.outer, rank);
            let (inner, inner_strides) = order(&l.inner, rank);
            let tile_shape = longs_or_null(env, Some(&l.tile_shape))?;
            let outer_strides: JObject = new_longs(env, &outer_strides)?.into();
            let inner_strides: JObject = new_longs(env, &inner_strides)?.into();
            c.tile_level.make(
                env,
                &[
                    JValue::Int(outer),
                    JValue::Int(inner),
                    JValue::Object(&tile_shape),
                    JValue::Object(&outer_strides),
                    JValue::Object(&inner_strides),
                ],
            )
        })?,
        _ => JObject::null(),
    };
    let morton = match &m.layout {
        Layout::Morton { bits } => longs_or_null(env, Some(bits))?,
        _ => JObject::null(),
    };
    let hilbert = match &m.layout {
        Layout::Hilbert { order, rank } => longs_or_null(env, Some(&[*order, *rank][..]))?,
        _ => JObject::null(),
    };
    let csf = match &m.layout {
        Layout::Csf { mode_order, .. } => longs_or_null(env, Some(mode_order))?,
        _ => JObject::null(),
    };
    let paged = match &m.layout {
        Layout::BlockPaged(b) => {
            let b = HurrayBlockPaged::from(b);
            c.block_paged.make(
                env,
                &[
                    JValue::Long(b.num_pages as i64),
                    JValue::Int(b.page_size as i32),
                    JValue::Int(b.paged_axis as i32),
                    JValue::Int(b.num_seqs as i32),
                    JValue::Int(b.layer_index as i32),
                    JValue::Int(i32::from(b.kv_role)),
                    JValue::Int(i32::from(b.block_table_index_type)),
                ],
            )?
        }
        _ => JObject::null(),
    };
    c.descriptor.make(
        env,
        &[
            JValue::Object(&bytes),
            JValue::Int(i32::from(VERSION_MAJOR)),
            JValue::Int(i32::from(m.version_minor)),
            JValue::Int(i32::from(m.element_type.tag())),
            JValue::Int(i32::from(m.layout.tag())),
            JValue::Int(m.flags() as i32),
            JValue::Long(m.byte_offset as i64),
            JValue::Object(&shape),
            JValue::Object(&buffers),
            JValue::Object(&strides),
            JValue::Bool(u8::from(nnz.is_some())),
            JValue::Long(nnz.unwrap_or(0) as i64),
            JValue::Object(&quantization),
            JValue::Object(&statistics),
            JValue::Int(coo_sorted),
            JValue::Object(&head),
            JValue::Int(member_role),
            JValue::Object(&shard),
            JValue::Object(&tiling),
            JValue::Object(&morton),
            JValue::Object(&hilbert),
            JValue::Object(&csf),
            JValue::Object(&paged),
        ],
    )
}
