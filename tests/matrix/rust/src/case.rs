//! The case list (`tests/cases/cases.txt`, syntax in `tests/cases/README.md`) as a
//! language-neutral model, and the SplitMix64 generator every language shares.
//!
//! This is the reference reader of the case syntax: `cargo test` runs every case
//! through it, so a malformed case fails here before any other language sees it.

use std::fmt;

/// A parse error: line number and message.
#[derive(Debug)]
pub struct ParseError {
    /// 1-based line in the case file.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cases line {}: {}", self.line, self.message)
    }
}

type PResult<T> = Result<T, ParseError>;

/// One case: items in file/stream order and file KV entries.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// `[a-z0-9_]+`.
    pub name: String,
    /// Top-level items, in order.
    pub items: Vec<Item>,
    /// KV entries, in order.
    pub kv: Vec<(String, KvSpec)>,
}

/// A tensor or a composite.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A tensor that is not a composite head.
    Tensor(TensorSpec),
    /// A composite head and its members.
    Composite(CompositeSpec),
}

impl Item {
    /// The item's name.
    pub fn name(&self) -> &str {
        match self {
            Item::Tensor(t) => &t.name,
            Item::Composite(c) => &c.name,
        }
    }

    /// Every name in pre-order (head, members).
    pub fn names(&self, out: &mut Vec<String>) {
        out.push(self.name().to_string());
        if let Item::Composite(c) = self {
            c.members.iter().for_each(|m| m.names(out));
        }
    }
}

/// Tile order of one tiling level.
#[derive(Clone, Debug, PartialEq)]
pub enum TileOrderSpec {
    /// Row-major.
    RowMajor,
    /// Column-major.
    ColMajor,
    /// Strided (tiles for the grid, elements inside a tile).
    Strided(Vec<i64>),
    /// The next level describes the tile (inner order only).
    Tiled,
}

/// One level of a tiled layout.
#[derive(Clone, Debug, PartialEq)]
pub struct TileSpec {
    /// Elements per tile.
    pub shape: Vec<u64>,
    /// Order of the tile grid.
    pub outer: TileOrderSpec,
    /// Order inside a tile.
    pub inner: TileOrderSpec,
}

/// A layout and its fields.
#[derive(Clone, Debug, PartialEq)]
pub enum LayoutSpec {
    /// `row_major`.
    RowMajor,
    /// `col_major`.
    ColMajor,
    /// `strided S...`.
    Strided(Vec<i64>),
    /// `tiled` with its levels.
    Tiled(Vec<TileSpec>),
    /// `morton B...`.
    Morton(Vec<u32>),
    /// `hilbert ORDER RANK`.
    Hilbert(u32, u32),
    /// `coo NNZ sorted|unsorted`.
    Coo(u64, bool),
    /// `csr NNZ`.
    Csr(u64),
    /// `csc NNZ`.
    Csc(u64),
    /// `csf NNZ MODE_ORDER`.
    Csf(u64, Vec<u32>),
    /// `block_paged ...`.
    BlockPaged(BlockPagedSpec),
}

impl LayoutSpec {
    /// The layout tag.
    pub fn tag(&self) -> u8 {
        match self {
            LayoutSpec::RowMajor => 0x01,
            LayoutSpec::ColMajor => 0x02,
            LayoutSpec::Strided(_) => 0x03,
            LayoutSpec::Tiled(_) => 0x04,
            LayoutSpec::Morton(_) => 0x05,
            LayoutSpec::Coo(..) => 0x06,
            LayoutSpec::Csr(_) => 0x07,
            LayoutSpec::Csc(_) => 0x08,
            LayoutSpec::Csf(..) => 0x09,
            LayoutSpec::BlockPaged(_) => 0x0A,
            LayoutSpec::Hilbert(..) => 0x40,
        }
    }
}

/// Block-paged fields (paged axis 0).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockPagedSpec {
    /// Tokens per page.
    pub page_size: u32,
    /// Pages in the pool.
    pub num_pages: u64,
    /// Sequences.
    pub num_seqs: u32,
    /// 0 key, 1 value, 2 fused.
    pub kv_role: u8,
    /// Layer, `0xFFFF_FFFF` for none.
    pub layer_index: u32,
    /// u64 tables (else u32).
    pub index64: bool,
}

/// A buffer-table entry and its bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferSpec {
    /// `byte_size`.
    pub size: u64,
    /// Declared alignment.
    pub align: u32,
    /// Memory class tag (0 standard, 1 host-pinned, 2 unified).
    pub memory: u8,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// A quantization section.
#[derive(Clone, Debug, PartialEq)]
pub enum QuantSpec {
    /// Scale, zero point.
    PerTensor(f32, i32),
    /// Axis, scale buffer, zero-point buffer.
    PerChannel(u32, u32, Option<u32>),
    /// Axis, block, scale buffer, zero-point buffer, scale type tag (1 f16, 2 bf16, 3 f32).
    PerBlock(u32, u32, u32, Option<u32>, u8),
    /// Axis, block, scale buffer.
    Nf4(u32, u32, u32),
    /// Axis, block, scale buffer.
    Mxfp(u32, u32, u32),
}

/// A statistics section: mask plus the fields (absent ones 0).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StatsSpec {
    /// `computed_mask`.
    pub mask: u32,
    /// nnz.
    pub nnz: u64,
    /// sparsity ratio.
    pub sparsity: f64,
    /// min.
    pub min: f64,
    /// max.
    pub max: f64,
    /// abs max.
    pub absmax: f64,
    /// mean.
    pub mean: f64,
    /// stddev.
    pub stddev: f64,
    /// N of N:M.
    pub nm_n: u8,
    /// M of N:M.
    pub nm_m: u8,
    /// has NaN.
    pub has_nan: u8,
    /// has Inf.
    pub has_inf: u8,
}

/// A tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec {
    /// Name in the file.
    pub name: String,
    /// Dtype name (`element-types.md` §2).
    pub dtype: String,
    /// Shape.
    pub shape: Vec<u64>,
    /// Layout.
    pub layout: LayoutSpec,
    /// `byte_offset`.
    pub offset: u64,
    /// Buffer table and bytes.
    pub buffers: Vec<BufferSpec>,
    /// Quantization.
    pub quant: Option<QuantSpec>,
    /// Shard: parent shape, offset.
    pub shard: Option<(Vec<u64>, Vec<u64>)>,
    /// Statistics.
    pub stats: Option<StatsSpec>,
    /// Member role: 0 correction, 1 base.
    pub role: Option<u8>,
}

/// A composite head and its members.
#[derive(Clone, Debug, PartialEq)]
pub struct CompositeSpec {
    /// Name of the head.
    pub name: String,
    /// Head dtype.
    pub dtype: String,
    /// Head shape.
    pub shape: Vec<u64>,
    /// 1 partition, 2 overlay, 3 group.
    pub rule: u8,
    /// 0 none, 1 replace, 2 add.
    pub op: u8,
    /// Members in order.
    pub members: Vec<Item>,
    /// Shard of a nested head.
    pub shard: Option<(Vec<u64>, Vec<u64>)>,
    /// Statistics of the head.
    pub stats: Option<StatsSpec>,
}

/// A KV value.
#[derive(Clone, Debug, PartialEq)]
pub enum KvSpec {
    /// string.
    String(String),
    /// int64.
    Int64(i64),
    /// uint64.
    UInt64(u64),
    /// float64 (bit pattern kept).
    Float64(f64),
    /// bool.
    Bool(bool),
    /// bytes.
    Bytes(Vec<u8>),
    /// array:string.
    Strings(Vec<String>),
    /// array:int64.
    Int64s(Vec<i64>),
    /// array:uint64.
    UInt64s(Vec<u64>),
    /// array:float64.
    Float64s(Vec<f64>),
    /// array:bool.
    Bools(Vec<bool>),
    /// array:bytes.
    Blobs(Vec<Vec<u8>>),
}

/// SplitMix64: the generator every language implements.
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// Seeded.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next output.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `n` bytes: outputs as little-endian u64s, cut at `n`.
    pub fn bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut g = SplitMix64::new(seed);
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&g.next().to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

/// Decodes `%XX` escapes; `~` alone is the empty string.
pub fn unescape(tok: &str) -> Result<Vec<u8>, String> {
    if tok == "~" {
        return Ok(Vec::new());
    }
    let b = tok.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = tok
                .get(i + 1..i + 3)
                .ok_or_else(|| format!("bad escape in {tok:?}"))?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| format!("bad escape in {tok:?}"))?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

fn unescape_str(tok: &str) -> Result<String, String> {
    String::from_utf8(unescape(tok)?).map_err(|_| format!("{tok:?} is not UTF-8"))
}

fn hex_bytes(s: &str) -> Result<Vec<u8>, String> {
    if s == "~" {
        return Ok(Vec::new());
    }
    if s.len() % 2 != 0 {
        return Err(format!("odd number of hex digits in {s:?}"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| format!("bad hex {s:?}")))
        .collect()
}

fn num<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("bad {what} {s:?}"))
}

fn list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>, String> {
    s.split(',').map(|v| num(v, what)).collect()
}

fn shape(s: &str) -> Result<Vec<u64>, String> {
    if s == "scalar" {
        Ok(Vec::new())
    } else {
        list(s, "dimension")
    }
}

/// A float64 token: decimal, `inf`, `-inf`, or `bits:` + 16 hex digits.
pub fn parse_f64(s: &str) -> Result<f64, String> {
    if let Some(h) = s.strip_prefix("bits:") {
        return u64::from_str_radix(h, 16)
            .map(f64::from_bits)
            .map_err(|_| format!("bad float bits {s:?}"));
    }
    num(s, "float")
}

fn tile_order(s: &str, inner: bool) -> Result<TileOrderSpec, String> {
    Ok(match s {
        "row_major" => TileOrderSpec::RowMajor,
        "col_major" => TileOrderSpec::ColMajor,
        "tiled" if inner => TileOrderSpec::Tiled,
        _ => match s.strip_prefix("strided:") {
            Some(l) => TileOrderSpec::Strided(list(l, "stride")?),
            None => return Err(format!("bad tile order {s:?}")),
        },
    })
}

fn fill(size: u64, t: &[&str]) -> Result<Vec<u8>, String> {
    let n = usize::try_from(size).map_err(|_| "size too large".to_string())?;
    let kind = *t.first().ok_or("missing fill")?;
    let vals = &t[1..];
    let out = match kind {
        "zero" => vec![0; n],
        "rand" => {
            let mut b =
                SplitMix64::bytes(num(vals.first().ok_or("rand needs a seed")?, "seed")?, n);
            if let Some(bits) = vals.get(1) {
                let bits: usize =
                    num(bits.strip_prefix("bits=").ok_or("expected bits=N")?, "bits")?;
                for (i, byte) in b.iter_mut().enumerate() {
                    for k in 0..8 {
                        if i * 8 + k >= bits {
                            *byte &= !(1 << k);
                        }
                    }
                }
            }
            b
        }
        "randrange" => {
            let [seed, lo, hi] = vals else {
                return Err("randrange SEED LO HI".into());
            };
            let (lo, hi): (u32, u32) = (num(lo, "lo")?, num(hi, "hi")?);
            SplitMix64::bytes(num(seed, "seed")?, n)
                .into_iter()
                .map(|g| (lo + u32::from(g) % (hi - lo + 1)) as u8)
                .collect()
        }
        "hex" => hex_bytes(&vals.concat())?,
        _ => {
            let mut out = Vec::new();
            for v in vals {
                match kind {
                    "u8" => out.push(num::<u8>(v, "u8")?),
                    "i8" => out.push(num::<i8>(v, "i8")? as u8),
                    "u16" => out.extend(num::<u16>(v, "u16")?.to_le_bytes()),
                    "i16" => out.extend(num::<i16>(v, "i16")?.to_le_bytes()),
                    "u32" => out.extend(num::<u32>(v, "u32")?.to_le_bytes()),
                    "i32" => out.extend(num::<i32>(v, "i32")?.to_le_bytes()),
                    "u64" => out.extend(num::<u64>(v, "u64")?.to_le_bytes()),
                    "i64" => out.extend(num::<i64>(v, "i64")?.to_le_bytes()),
                    "f32" => out.extend(num::<f32>(v, "f32")?.to_le_bytes()),
                    "f64" => out.extend(parse_f64(v)?.to_le_bytes()),
                    _ => return Err(format!("unknown fill {kind:?}")),
                }
            }
            out
        }
    };
    if out.len() != n {
        return Err(format!(
            "fill gives {} bytes, the buffer has {n}",
            out.len()
        ));
    }
    Ok(out)
}

fn stats(t: &[&str]) -> Result<StatsSpec, String> {
    let mut s = StatsSpec::default();
    let mut seen = std::collections::HashMap::new();
    for tok in t {
        let (k, v) = tok
            .split_once('=')
            .ok_or_else(|| format!("bad stat {tok:?}"))?;
        seen.insert(k, v);
    }
    let group = |keys: &[&str]| -> Result<bool, String> {
        let n = keys.iter().filter(|k| seen.contains_key(*k)).count();
        match n {
            0 => Ok(false),
            n if n == keys.len() => Ok(true),
            _ => Err(format!("stats {keys:?} go together")),
        }
    };
    if group(&["nnz"])? {
        s.mask |= 1;
        s.nnz = num(seen["nnz"], "nnz")?;
    }
    if group(&["sparsity"])? {
        s.mask |= 2;
        s.sparsity = parse_f64(seen["sparsity"])?;
    }
    if group(&["min", "max", "absmax"])? {
        s.mask |= 4;
        s.min = parse_f64(seen["min"])?;
        s.max = parse_f64(seen["max"])?;
        s.absmax = parse_f64(seen["absmax"])?;
    }
    if group(&["mean", "stddev"])? {
        s.mask |= 8;
        s.mean = parse_f64(seen["mean"])?;
        s.stddev = parse_f64(seen["stddev"])?;
    }
    if group(&["nm"])? {
        s.mask |= 16;
        let (n, m) = seen["nm"].split_once(':').ok_or("nm=N:M")?;
        s.nm_n = num(n, "N")?;
        s.nm_m = num(m, "M")?;
    }
    if group(&["nan", "inf"])? {
        s.mask |= 32;
        s.has_nan = num(seen["nan"], "nan")?;
        s.has_inf = num(seen["inf"], "inf")?;
    }
    let known = [
        "nnz", "sparsity", "min", "max", "absmax", "mean", "stddev", "nm", "nan", "inf",
    ];
    if let Some(k) = seen.keys().find(|k| !known.contains(k)) {
        return Err(format!("unknown stat {k:?}"));
    }
    Ok(s)
}

fn kv(t: &[&str]) -> Result<KvSpec, String> {
    let ty = *t.first().ok_or("missing kv type")?;
    let v = &t[1..];
    let one = || -> Result<&str, String> {
        match v {
            [x] => Ok(x),
            _ => Err(format!("kv {ty} takes one value")),
        }
    };
    let boolean = |s: &str| match s {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("bad bool {s:?}")),
    };
    Ok(match ty {
        "string" => KvSpec::String(unescape_str(one()?)?),
        "int64" => KvSpec::Int64(num(one()?, "int64")?),
        "uint64" => KvSpec::UInt64(num(one()?, "uint64")?),
        "float64" => KvSpec::Float64(parse_f64(one()?)?),
        "bool" => KvSpec::Bool(boolean(one()?)?),
        "bytes" => KvSpec::Bytes(hex_bytes(one()?)?),
        "array:string" => KvSpec::Strings(
            v.iter()
                .map(|s| unescape_str(s))
                .collect::<Result<_, _>>()?,
        ),
        "array:int64" => KvSpec::Int64s(
            v.iter()
                .map(|s| num(s, "int64"))
                .collect::<Result<_, _>>()?,
        ),
        "array:uint64" => KvSpec::UInt64s(
            v.iter()
                .map(|s| num(s, "uint64"))
                .collect::<Result<_, _>>()?,
        ),
        "array:float64" => {
            KvSpec::Float64s(v.iter().map(|s| parse_f64(s)).collect::<Result<_, _>>()?)
        }
        "array:bool" => KvSpec::Bools(v.iter().map(|s| boolean(s)).collect::<Result<_, _>>()?),
        "array:bytes" => KvSpec::Blobs(v.iter().map(|s| hex_bytes(s)).collect::<Result<_, _>>()?),
        _ => return Err(format!("unknown kv type {ty:?}")),
    })
}

fn layout(t: &[&str]) -> Result<LayoutSpec, String> {
    let args = &t[1..];
    let arg = |i: usize| -> Result<&str, String> {
        args.get(i)
            .copied()
            .ok_or_else(|| format!("layout {} needs more arguments", t[0]))
    };
    Ok(match t[0] {
        "row_major" => LayoutSpec::RowMajor,
        "col_major" => LayoutSpec::ColMajor,
        "strided" => LayoutSpec::Strided(list(arg(0)?, "stride")?),
        "tiled" => LayoutSpec::Tiled(Vec::new()),
        "morton" => LayoutSpec::Morton(list(arg(0)?, "bits")?),
        "hilbert" => LayoutSpec::Hilbert(num(arg(0)?, "order")?, num(arg(1)?, "rank")?),
        "coo" => LayoutSpec::Coo(
            num(arg(0)?, "nnz")?,
            match arg(1)? {
                "sorted" => true,
                "unsorted" => false,
                s => return Err(format!("bad sortedness {s:?}")),
            },
        ),
        "csr" => LayoutSpec::Csr(num(arg(0)?, "nnz")?),
        "csc" => LayoutSpec::Csc(num(arg(0)?, "nnz")?),
        "csf" => LayoutSpec::Csf(num(arg(0)?, "nnz")?, list(arg(1)?, "mode")?),
        "block_paged" => LayoutSpec::BlockPaged(BlockPagedSpec {
            page_size: num(arg(0)?, "page_size")?,
            num_pages: num(arg(1)?, "num_pages")?,
            num_seqs: num(arg(2)?, "num_seqs")?,
            kv_role: match arg(3)? {
                "key" => 0,
                "value" => 1,
                "fused" => 2,
                s => return Err(format!("bad kv role {s:?}")),
            },
            layer_index: match arg(4)? {
                "none" => u32::MAX,
                s => num(s, "layer")?,
            },
            index64: match arg(5)? {
                "u32" => false,
                "u64" => true,
                s => return Err(format!("bad index type {s:?}")),
            },
        }),
        l => return Err(format!("unknown layout {l:?}")),
    })
}

/// What is being filled: a path of member indices from a top-level item.
struct Open {
    /// Path to the current tensor or head (indices into items / members).
    path: Vec<usize>,
    /// Open composites: (path, members still expected).
    composites: Vec<(Vec<usize>, u32)>,
}

fn item_at<'a>(items: &'a mut [Item], path: &[usize]) -> &'a mut Item {
    let mut it = &mut items[path[0]];
    for &i in &path[1..] {
        it = match it {
            Item::Composite(c) => &mut c.members[i],
            Item::Tensor(_) => unreachable!("paths only go through composites"),
        };
    }
    it
}

/// Parses the whole case list.
///
/// Errors: the first malformed line.
pub fn parse(text: &str) -> PResult<Vec<Case>> {
    let mut cases: Vec<Case> = Vec::new();
    let mut open: Option<Open> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |message: String| ParseError { line, message };
        let toks: Vec<&str> = raw.split_whitespace().collect();
        if toks.is_empty() || toks[0].starts_with('#') {
            continue;
        }
        let (dir, rest) = (toks[0], &toks[1..]);
        if dir == "case" {
            if let Some(o) = &open {
                if !o.composites.is_empty() {
                    return Err(err("previous case ends inside a composite".into()));
                }
            }
            let name = rest
                .first()
                .ok_or_else(|| err("case needs a name".into()))?;
            if !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                || cases.iter().any(|c| c.name == *name)
            {
                return Err(err(format!("bad or duplicate case name {name:?}")));
            }
            cases.push(Case {
                name: name.to_string(),
                items: Vec::new(),
                kv: Vec::new(),
            });
            open = Some(Open {
                path: Vec::new(),
                composites: Vec::new(),
            });
            continue;
        }
        let (Some(case), Some(o)) = (cases.last_mut(), open.as_mut()) else {
            return Err(err(format!("{dir} before the first case")));
        };
        match dir {
            "note" => {}
            "kv" => {
                let key = unescape_str(rest.first().ok_or_else(|| err("kv needs a key".into()))?)
                    .map_err(err)?;
                case.kv.push((key, kv(&rest[1..]).map_err(err)?));
            }
            "tensor" | "composite" => {
                if rest.len() < 4 {
                    return Err(err(format!("{dir} NAME DTYPE SHAPE ...")));
                }
                let name = unescape_str(rest[0]).map_err(err)?;
                let dtype = rest[1].to_string();
                let shp = shape(rest[2]).map_err(err)?;
                let mut count: u32 = 0;
                let item = if dir == "tensor" {
                    Item::Tensor(TensorSpec {
                        name,
                        dtype,
                        shape: shp,
                        layout: layout(&rest[3..]).map_err(err)?,
                        offset: 0,
                        buffers: Vec::new(),
                        quant: None,
                        shard: None,
                        stats: None,
                        role: None,
                    })
                } else {
                    let [_, _, _, rule, op, cnt] = rest else {
                        return Err(err("composite NAME DTYPE SHAPE RULE OP COUNT".into()));
                    };
                    Item::Composite(CompositeSpec {
                        name,
                        dtype,
                        shape: shp,
                        rule: match *rule {
                            "partition" => 1,
                            "overlay" => 2,
                            "group" => 3,
                            r => return Err(err(format!("bad rule {r:?}"))),
                        },
                        op: match *op {
                            "none" => 0,
                            "replace" => 1,
                            "add" => 2,
                            r => return Err(err(format!("bad op {r:?}"))),
                        },
                        members: {
                            count = num(cnt, "count").map_err(err)?;
                            Vec::new()
                        },
                        shard: None,
                        stats: None,
                    })
                };
                // Place it: as the next member of the innermost open composite, or
                // at top level.
                let path = if let Some((cpath, left)) = o.composites.last_mut() {
                    let parent = match item_at(&mut case.items, cpath) {
                        Item::Composite(c) => c,
                        Item::Tensor(_) => unreachable!(),
                    };
                    let want = format!("{}/{}", parent.name, parent.members.len());
                    if item.name() != want {
                        return Err(err(format!("member must be named {want:?}")));
                    }
                    parent.members.push(item);
                    let mut p = cpath.clone();
                    p.push(parent.members.len() - 1);
                    *left -= 1;
                    p
                } else {
                    case.items.push(item);
                    vec![case.items.len() - 1]
                };
                // Close finished composites.
                while o.composites.last().is_some_and(|c| c.1 == 0) {
                    o.composites.pop();
                }
                if dir == "composite" {
                    o.composites.push((path.clone(), count));
                    if count == 0 {
                        o.composites.pop();
                    }
                }
                o.path = path;
            }
            _ => {
                if o.path.is_empty() {
                    return Err(err(format!("{dir} outside a tensor")));
                }
                match item_at(&mut case.items, &o.path) {
                    Item::Tensor(t) => tensor_directive(t, dir, rest).map_err(err)?,
                    Item::Composite(c) => match dir {
                        "shard" => c.shard = Some(shard(rest).map_err(err)?),
                        "stats" => c.stats = Some(stats(rest).map_err(err)?),
                        _ => return Err(err(format!("{dir} does not apply to a composite head"))),
                    },
                }
            }
        }
    }
    if open.is_some_and(|o| !o.composites.is_empty()) {
        return Err(ParseError {
            line: text.lines().count(),
            message: "the last case ends inside a composite".into(),
        });
    }
    Ok(cases)
}

fn shard(rest: &[&str]) -> Result<(Vec<u64>, Vec<u64>), String> {
    match rest {
        [p, o] => Ok((list(p, "parent")?, list(o, "offset")?)),
        _ => Err("shard PARENT OFFSET".into()),
    }
}

fn tensor_directive(t: &mut TensorSpec, dir: &str, rest: &[&str]) -> Result<(), String> {
    match dir {
        "tile" => {
            let LayoutSpec::Tiled(levels) = &mut t.layout else {
                return Err("tile on a tensor that is not tiled".into());
            };
            let [s, outer, inner] = rest else {
                return Err("tile SHAPE OUTER INNER".into());
            };
            if levels
                .last()
                .is_some_and(|l| l.inner != TileOrderSpec::Tiled)
            {
                return Err("the previous level's inner order is not tiled".into());
            }
            levels.push(TileSpec {
                shape: list(s, "tile")?,
                outer: tile_order(outer, false)?,
                inner: tile_order(inner, true)?,
            });
        }
        "offset" => t.offset = num(rest.first().ok_or("offset N")?, "offset")?,
        "buffer" => {
            let size: u64 = num(rest.first().ok_or("buffer SIZE ...")?, "size")?;
            let mut b = BufferSpec {
                size,
                align: if size > 0 { 64 } else { 1 },
                memory: 0,
                bytes: Vec::new(),
            };
            let mut k = 1;
            while let Some(opt) = rest.get(k) {
                if let Some(a) = opt.strip_prefix("align=") {
                    b.align = num(a, "align")?;
                } else if let Some(m) = opt.strip_prefix("memory=") {
                    b.memory = match m {
                        "standard" => 0,
                        "host_pinned" => 1,
                        "unified" => 2,
                        _ => return Err(format!("bad memory class {m:?}")),
                    };
                } else {
                    break;
                }
                k += 1;
            }
            b.bytes = fill(size, &rest[k..])?;
            t.buffers.push(b);
        }
        "quant" => {
            let n = |i: usize| -> Result<u32, String> {
                num(
                    rest.get(i).ok_or("quant needs more arguments")?,
                    "quant field",
                )
            };
            let zp = |i: usize| -> Result<Option<u32>, String> {
                match rest.get(i) {
                    Some(&"none") => Ok(None),
                    _ => n(i).map(Some),
                }
            };
            t.quant = Some(match *rest.first().ok_or("quant SCHEME ...")? {
                "per_tensor" => QuantSpec::PerTensor(
                    num(rest.get(1).ok_or("scale")?, "scale")?,
                    num(rest.get(2).ok_or("zero point")?, "zero point")?,
                ),
                "per_channel" => QuantSpec::PerChannel(n(1)?, n(2)?, zp(3)?),
                "per_block" => QuantSpec::PerBlock(
                    n(1)?,
                    n(2)?,
                    n(3)?,
                    zp(4)?,
                    match rest.get(5) {
                        Some(&"f16") => 1,
                        Some(&"bf16") => 2,
                        Some(&"f32") => 3,
                        s => return Err(format!("bad scale type {s:?}")),
                    },
                ),
                "nf4" => QuantSpec::Nf4(n(1)?, n(2)?, n(3)?),
                "mxfp" => QuantSpec::Mxfp(n(1)?, n(2)?, n(3)?),
                s => return Err(format!("unknown scheme {s:?}")),
            });
        }
        "shard" => t.shard = Some(shard(rest)?),
        "stats" => t.stats = Some(stats(rest)?),
        "role" => {
            t.role = Some(match rest.first() {
                Some(&"correction") => 0,
                Some(&"base") => 1,
                r => return Err(format!("bad role {r:?}")),
            })
        }
        _ => return Err(format!("unknown directive {dir:?}")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_check_values() {
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(SplitMix64::bytes(1, 4), [0xC1, 0x5C, 0x02, 0x89]);
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape("a%20b").unwrap(), b"a b");
        assert_eq!(unescape("~").unwrap(), b"");
        assert!(unescape("%2").is_err());
    }

    #[test]
    fn rand_bits_clears_padding() {
        let b = fill(2, &["rand", "113", "bits=15"]).unwrap();
        assert_eq!(b[1] & 0x80, 0);
        assert_eq!(b[0], SplitMix64::bytes(113, 1)[0]);
    }

    #[test]
    fn members_must_use_writer_names() {
        let bad = "case x\ncomposite c float32 2 group none 1\ntensor d float32 2 row_major\n";
        assert!(parse(bad).unwrap_err().message.contains("c/0"));
    }
}
