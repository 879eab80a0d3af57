'use strict';
// The Node producer and consumer of the cross-language matrix (tests/matrix/README.md).
//
//   node matrix.js produce CASES OUT_DIR   write CASE.hrry / CASE.hrrys for every case
//   node matrix.js consume CASES DIR...    check every producer directory (result lines)
//   node matrix.js views FILE              the demo: open, view and checksum every tensor
//   node matrix.js hostile DIR             every hostile file and stream must be refused (hostile.js)
//   node matrix.js metadata FILE [ranged]  open, read every KV value and name (amplification)
//   node matrix.js net-get ADDR CASES OUT  GET every item as "CASE:NAME" (hurray.connect),
//                                          write OUT/CASE.hrry as `produce` does
//   node matrix.js net-put ADDR CASES DIR  PUT every item of DIR/CASE.hrry as "CASE:NAME"
//   node matrix.js net-views ADDR FILE     the demo's network step: GET every tensor, the views table
//
// It uses the public `hurray` package only: Descriptor.build for every descriptor,
// Tensor.fromBuffers over hurray.alloc memory, Item.of / Item.composite,
// FileWriter / FileReader (items, KV), encodeStream / StreamReader.items(). The
// consumer compares every descriptor field through the Descriptor accessors (the
// first difference names the field), then the descriptor's encoding, then every
// byte. Case syntax: tests/cases/README.md.

const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const { hostile } = require('./hostile');

const hurray = require(process.env.HURRAY_NODE_PACKAGE || path.join(__dirname, '..', '..', '..', 'bindings', 'node'));

// ---------------------------------------------------------------- cases

const MASK = (1n << 64n) - 1n;

/** SplitMix64 bytes for `seed` (tests/cases/README.md). */
function splitmix(seed, n) {
  const out = new Uint8Array(n);
  let s = BigInt(seed) & MASK;
  for (let i = 0; i < n; i += 8) {
    s = (s + 0x9e3779b97f4a7c15n) & MASK;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    z ^= z >> 31n;
    for (let k = 0; k < 8 && i + k < n; k++) out[i + k] = Number((z >> BigInt(8 * k)) & 0xffn);
  }
  return out;
}

function unescapeBytes(tok) {
  if (tok === '~') return Buffer.alloc(0);
  const out = [];
  for (let i = 0; i < tok.length; i++) {
    if (tok[i] === '%' && /^[0-9a-fA-F]{2}$/.test(tok.slice(i + 1, i + 3))) {
      out.push(parseInt(tok.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      out.push(...Buffer.from(tok[i], 'utf8'));
    }
  }
  return Buffer.from(out);
}
const unescape = (tok) => unescapeBytes(tok).toString('utf8');
const hexBytes = (tok) => (tok === '~' ? Buffer.alloc(0) : Buffer.from(tok, 'hex'));

function f64(tok) {
  if (tok.startsWith('bits:')) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt('0x' + tok.slice(5)));
    return b.readDoubleLE(0);
  }
  if (tok === 'inf') return Infinity;
  if (tok === '-inf') return -Infinity;
  const v = Number(tok);
  if (Number.isNaN(v)) throw new Error(`bad number ${tok}`);
  return v;
}
const int = (s) => {
  if (!/^-?\d+$/.test(s)) throw new Error(`bad number ${s}`);
  return Number(s);
};
const ints = (s) => s.split(',').map(int);

function fill(size, t) {
  let out;
  switch (t[0]) {
    case 'zero':
      out = new Uint8Array(size);
      break;
    case 'rand':
      out = splitmix(t[1], size);
      if (t.length > 2) {
        const bits = int(t[2].replace('bits=', ''));
        for (let i = bits; i < size * 8; i++) out[i >> 3] &= ~(1 << (i & 7));
      }
      break;
    case 'randrange': {
      const lo = int(t[2]);
      const hi = int(t[3]);
      out = splitmix(t[1], size).map((g) => lo + (g % (hi - lo + 1)));
      break;
    }
    case 'hex':
      out = hexBytes(t.slice(1).join(''));
      break;
    default: {
      const widths = { u8: 1, i8: 1, u16: 2, i16: 2, u32: 4, i32: 4, u64: 8, i64: 8, f32: 4, f64: 8 };
      const w = widths[t[0]];
      if (!w) throw new Error(`unknown fill ${t[0]}`);
      const b = Buffer.alloc(w * (t.length - 1));
      t.slice(1).forEach((v, i) => {
        const o = i * w;
        switch (t[0]) {
          case 'u8':
          case 'i8':
            b.writeUInt8(BigInt.asUintN(8, BigInt(v)).toString() | 0, o);
            break;
          case 'u16':
          case 'i16':
            b.writeUInt16LE(Number(BigInt.asUintN(16, BigInt(v))), o);
            break;
          case 'u32':
          case 'i32':
            b.writeUInt32LE(Number(BigInt.asUintN(32, BigInt(v))), o);
            break;
          case 'u64':
          case 'i64':
            b.writeBigUInt64LE(BigInt.asUintN(64, BigInt(v)), o);
            break;
          case 'f32':
            b.writeFloatLE(f64(v), o);
            break;
          default:
            b.writeDoubleLE(f64(v), o);
        }
      });
      out = b;
    }
  }
  if (out.length !== size) throw new Error(`fill gives ${out.length} bytes, the buffer has ${size}`);
  return new Uint8Array(out);
}

function stats(t) {
  const s = {
    computedMask: 0, nnz: 0, sparsity: 0, min: 0, max: 0, absmax: 0, mean: 0, stddev: 0,
    nmN: 0, nmM: 0, hasNan: false, hasInf: false,
  };
  for (const tok of t) {
    const [k, v] = tok.split('=');
    switch (k) {
      case 'nnz': s.nnz = int(v); s.computedMask |= 1; break;
      case 'sparsity': s.sparsity = f64(v); s.computedMask |= 2; break;
      case 'min': s.min = f64(v); s.computedMask |= 4; break;
      case 'max': s.max = f64(v); break;
      case 'absmax': s.absmax = f64(v); break;
      case 'mean': s.mean = f64(v); s.computedMask |= 8; break;
      case 'stddev': s.stddev = f64(v); break;
      case 'nm': { const [n, m] = v.split(':'); s.nmN = int(n); s.nmM = int(m); s.computedMask |= 16; break; }
      case 'nan': s.hasNan = v === '1'; s.computedMask |= 32; break;
      case 'inf': s.hasInf = v === '1'; break;
      default: throw new Error(`unknown stat ${k}`);
    }
  }
  return s;
}

/** A KV entry: its type name and value as the reader gives it back. */
function kvValue(t) {
  const [type, ...v] = t;
  const one = (kind, s) => {
    switch (kind) {
      case 'string': return unescape(s);
      case 'int64': return BigInt(s);
      case 'uint64': return BigInt(s);
      case 'float64': return f64(s);
      case 'bool': return s === 'true';
      case 'bytes': return hexBytes(s);
      default: throw new Error(`unknown kv type ${kind}`);
    }
  };
  if (type.startsWith('array:')) return { type, value: v.map((s) => one(type.slice(6), s)) };
  return { type, value: one(type, v[0]) };
}

function layout(s, t) {
  const a = t.slice(1);
  switch (t[0]) {
    case 'row_major': s.layout = 'row_major'; break;
    case 'col_major': s.layout = 'column_major'; break;
    case 'strided': s.layout = 'strided'; s.strides = ints(a[0]); break;
    case 'tiled': s.layout = 'tiled'; s.tiling = []; break;
    case 'morton': s.layout = 'morton'; s.mortonBits = ints(a[0]); break;
    case 'hilbert': s.layout = 'hilbert'; s.hilbert = { order: int(a[0]), rank: int(a[1]) }; break;
    case 'coo': s.layout = 'coo'; s.nnz = int(a[0]); s.cooSorted = a[1] === 'sorted'; break;
    case 'csr': s.layout = 'csr'; s.nnz = int(a[0]); break;
    case 'csc': s.layout = 'csc'; s.nnz = int(a[0]); break;
    case 'csf': s.layout = 'csf'; s.nnz = int(a[0]); s.csfModeOrder = ints(a[1]); break;
    case 'block_paged':
      s.layout = 'block_paged';
      s.blockPaged = {
        pageSize: int(a[0]), numPages: int(a[1]), numSeqs: int(a[2]), pagedAxis: 0,
        layerIndex: a[4] === 'none' ? undefined : int(a[4]), kvRole: a[3], index64: a[5] === 'u64',
      };
      break;
    default: throw new Error(`unknown layout ${t[0]}`);
  }
}

function quant(t) {
  const zp = (x) => (x === 'none' ? undefined : int(x));
  switch (t[0]) {
    case 'per_tensor': return { scheme: 'per_tensor_affine', scale: f64(t[1]), zeroPoint: int(t[2]) };
    case 'per_channel':
      return { scheme: 'per_channel_affine', axis: int(t[1]), scaleBufferIndex: int(t[2]), zeroPointBufferIndex: zp(t[3]), scaleType: 'float32' };
    case 'per_block':
      return {
        scheme: 'per_block_affine', axis: int(t[1]), blockSize: int(t[2]), scaleBufferIndex: int(t[3]),
        zeroPointBufferIndex: zp(t[4]), scaleType: { f16: 'float16', bf16: 'bfloat16', f32: 'float32' }[t[5]],
      };
    case 'nf4': return { scheme: 'nf4', axis: int(t[1]), blockSize: int(t[2]), scaleBufferIndex: int(t[3]) };
    case 'mxfp': return { scheme: 'mxfp', axis: int(t[1]), blockSize: int(t[2]), scaleBufferIndex: int(t[3]) };
    default: throw new Error(`unknown scheme ${t[0]}`);
  }
}

/** Parses the case list: [{name, items: [spec], kv: [{key, type, value}]}]. */
function parseCases(file) {
  const cases = [];
  let cur = null;
  let stack = [];
  fs.readFileSync(file, 'utf8').split('\n').forEach((text, n) => {
    const toks = text.trim().split(/\s+/).filter(Boolean);
    if (toks.length === 0 || toks[0].startsWith('#')) return;
    try {
      const [d, ...rest] = toks;
      switch (d) {
        case 'case': cases.push({ name: rest[0], items: [], kv: [] }); cur = null; stack = []; break;
        case 'note': break;
        case 'kv': cases[cases.length - 1].kv.push({ key: unescape(rest[0]), ...kvValue(rest.slice(1)) }); break;
        case 'tensor':
        case 'composite': {
          const s = {
            name: unescape(rest[0]), dtype: rest[1], shape: rest[2] === 'scalar' ? [] : ints(rest[2]),
            buffers: [], bytes: [], members: [], count: 0,
          };
          if (d === 'tensor') layout(s, rest.slice(3));
          else {
            s.layout = 'composite_head';
            s.count = int(rest[5]);
            s.composite = { memberCount: s.count, rule: rest[3], combine: rest[4] };
          }
          if (stack.length > 0) {
            stack[stack.length - 1].members.push(s);
            stack[stack.length - 1].count--;
          } else cases[cases.length - 1].items.push(s);
          while (stack.length > 0 && stack[stack.length - 1].count === 0) stack.pop();
          if (d === 'composite' && s.count > 0) stack.push(s);
          cur = s;
          break;
        }
        case 'tile': {
          const order = (o, nested) => {
            if (o === 'row_major') return ['row_major'];
            if (o === 'col_major') return ['column_major'];
            if (o === 'tiled' && nested) return ['tiled'];
            if (o.startsWith('strided:')) return ['strided', ints(o.slice(8))];
            throw new Error(`bad tile order ${o}`);
          };
          const [outer, outerStrides] = order(rest[1], false);
          const [inner, innerStrides] = order(rest[2], true);
          cur.tiling.push({ shape: ints(rest[0]), outer, outerStrides, inner, innerStrides });
          break;
        }
        case 'offset': cur.byteOffset = int(rest[0]); break;
        case 'buffer': {
          const size = int(rest[0]);
          const e = { byteSize: size, alignment: size > 0 ? 64 : 1, memoryClass: 0 };
          let k = 1;
          for (; k < rest.length; k++) {
            if (rest[k].startsWith('align=')) e.alignment = int(rest[k].slice(6));
            else if (rest[k].startsWith('memory=')) e.memoryClass = { standard: 0, host_pinned: 1, unified: 2 }[rest[k].slice(7)];
            else break;
          }
          cur.buffers.push(e);
          cur.bytes.push(fill(size, rest.slice(k)));
          break;
        }
        case 'quant': cur.quantization = quant(rest); break;
        case 'shard': cur.shard = { parentShape: ints(rest[0]), offset: ints(rest[1]) }; break;
        case 'stats': cur.statistics = stats(rest); break;
        case 'role': cur.memberRole = rest[0] === 'base' ? 'base' : 'correction'; break;
        default: throw new Error(`unknown directive ${d}`);
      }
    } catch (e) {
      throw new Error(`${file} line ${n + 1}: ${e.message}`);
    }
  });
  return cases;
}

/** The Descriptor.build input of a spec. */
function buildSpec(s) {
  const spec = {
    dtype: s.dtype, shape: s.shape, layout: s.layout, buffers: s.buffers,
  };
  for (const k of ['byteOffset', 'strides', 'tiling', 'mortonBits', 'hilbert', 'nnz', 'cooSorted', 'csfModeOrder', 'blockPaged', 'composite', 'quantization', 'shard', 'statistics', 'memberRole']) {
    if (s[k] !== undefined) spec[k] = s[k];
  }
  return spec;
}

// ---------------------------------------------------------------- producer

function makeItem(s) {
  const desc = hurray.Descriptor.build(buildSpec(s));
  const bufs = s.bytes.map((b, i) => {
    if (b.length === 0) return new Uint8Array(0);
    const a = new Uint8Array(hurray.alloc(b.length, Math.max(64, s.buffers[i].alignment)));
    a.set(b);
    return a;
  });
  const t = hurray.Tensor.fromBuffers(desc.encode(), bufs);
  desc.close();
  if (s.layout !== 'composite_head') return hurray.Item.of(t);
  return hurray.Item.composite(t, s.members.map(makeItem));
}

function addKV(w, e) {
  const v = e.value;
  switch (e.type) {
    case 'string': return w.addString(e.key, v);
    case 'int64': return w.addInt64(e.key, v);
    case 'uint64': return w.addUint64(e.key, v);
    case 'float64': return w.addFloat64(e.key, v);
    case 'bool': return w.addBool(e.key, v);
    case 'bytes': return w.addBytes(e.key, v);
    case 'array:string': return w.addStringArray(e.key, v);
    case 'array:int64': return w.addInt64Array(e.key, v);
    case 'array:uint64': return w.addUint64Array(e.key, v);
    case 'array:float64': return w.addFloat64Array(e.key, v);
    case 'array:bool': return w.addBoolArray(e.key, v);
    case 'array:bytes': return w.addBytesArray(e.key, v);
    default: throw new Error(`unknown kv type ${e.type}`);
  }
}

function produceCase(c, dir) {
  const items = c.items.map(makeItem);
  const w = hurray.FileWriter.create(path.join(dir, `${c.name}.hrry`), { durable: false });
  try {
    c.items.forEach((s, i) => w.writeItem(s.name, items[i]));
    for (const e of c.kv) addKV(w, e);
    w.finish();
  } finally {
    w.close();
  }
  fs.writeFileSync(path.join(dir, `${c.name}.hrrys`), hurray.encodeStream(items));
  for (const it of items) it.close();
}

// ---------------------------------------------------------------- consumer

function same(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b) || (a === b && a !== 0) || (a === 0 && b === 0 && Object.is(a, b));
  if (Array.isArray(a) || ArrayBuffer.isView(a)) {
    return (Array.isArray(b) || ArrayBuffer.isView(b)) && a.length === b.length && Array.from(a).every((x, i) => same(x, b[i]));
  }
  if (a && typeof a === 'object' && b && typeof b === 'object') {
    const keys = Object.keys(a);
    return keys.every((k) => same(a[k], b[k]));
  }
  return a === b;
}

function show(v) {
  if (v === null || v === undefined) return 'absent';
  if (typeof v === 'bigint') return v.toString();
  if (ArrayBuffer.isView(v)) return `<${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}>`;
  if (typeof v === 'object') return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x));
  return String(v);
}

/** The first differing field as "a.b: expected X, got Y", or null; floats by value
 * (NaN equals NaN, 0 differs from -0). */
function diff(at, want, got) {
  if (want === undefined) return null;
  if (want === null || got === null || typeof want !== 'object') {
    return same(want, got) ? null : `${at}: expected ${show(want)}, got ${show(got)}`;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return `${at}: expected ${show(want)}, got ${show(got)}`;
    for (let i = 0; i < want.length; i++) {
      const d = diff(`${at}[${i}]`, want[i], got[i]);
      if (d) return d;
    }
    return null;
  }
  for (const k of Object.keys(want)) {
    const d = diff(at ? `${at}.${k}` : k, want[k], got[k]);
    if (d) return d;
  }
  return null;
}

function fields(d) {
  return {
    dtype: d.dtype, shape: d.shape, layout: d.layout, byteOffset: d.byteOffset,
    buffers: d.buffers().map(({ byteSize, alignment, deviceTag, syncMode, memoryClass }) => ({ byteSize, alignment, deviceTag, syncMode, memoryClass })),
    strides: d.strides, tiling: d.tiling, mortonBits: d.mortonBits, hilbert: d.hilbert,
    nnz: d.nnz, cooSorted: d.cooSorted, csfModeOrder: d.csfModeOrder, blockPaged: d.blockPaged,
    composite: d.composite, quantization: d.quantization, shard: d.shard,
    statistics: d.statistics, memberRole: d.memberRole,
  };
}

function firstDifference(what, want, got) {
  if (Buffer.compare(Buffer.from(want), Buffer.from(got)) === 0) return null;
  let n = Math.abs(want.length - got.length);
  let first = -1;
  for (let i = 0; i < Math.min(want.length, got.length); i++) {
    if (want[i] !== got[i]) {
      n++;
      if (first < 0) first = i;
    }
  }
  const hex = (b) => '0x' + b.toString(16).padStart(2, '0');
  if (first >= 0) return `${what} byte ${first}: expected ${hex(want[first])}, got ${hex(got[first])} (${n} of ${want.length} bytes differ)`;
  return `${what}: expected ${want.length} bytes, got ${got.length}`;
}

function checkItem(s, it) {
  const composite = s.layout === 'composite_head';
  const at = (msg) => new Error(`${composite ? 'composite' : 'tensor'} ${JSON.stringify(s.name)}: ${msg}`);
  if (it.isComposite !== composite) throw at(`expected composite=${composite}, got composite=${it.isComposite}`);
  const t = it.tensor;
  const got = t.descriptor();
  const want = hurray.Descriptor.build(buildSpec(s));
  const d = diff('', fields(want), fields(got)) || firstDifference('descriptor', want.encode(), got.encode());
  want.close();
  if (d) throw at(d);
  got.close();
  s.bytes.forEach((b, i) => {
    const view = new Uint8Array(t.buffer(i));
    const d = firstDifference(`buffer ${i}`, b, view);
    if (d) throw at(d);
  });
  const members = it.members;
  if (members.length !== s.members.length) throw at(`expected ${s.members.length} members, got ${members.length}`);
  s.members.forEach((m, i) => checkItem(m, members[i]));
  t.close();
}

function names(s, out = []) {
  out.push(s.name);
  for (const m of s.members) names(m, out);
  return out;
}

function checkFile(c, file) {
  const r = hurray.FileReader.open(file);
  try {
    const want = c.items.flatMap((s) => names(s));
    if (!same(want, r.names)) throw new Error(`tensor names: expected ${show(want)}, got ${show(r.names)}`);
    for (const s of c.items) {
      const it = r.item(s.name);
      try {
        checkItem(s, it);
      } finally {
        it.close();
      }
    }
    const keys = r.keys;
    if (keys.length !== c.kv.length) throw new Error(`KV: expected ${c.kv.length} entries, got ${keys.length}`);
    c.kv.forEach((e, i) => {
      if (keys[i] !== e.key) throw new Error(`KV entry ${i}: expected key ${show(e.key)}, got ${show(keys[i])}`);
      const got = r.value(e.key);
      if (!same(e.value, got)) throw new Error(`KV ${show(e.key)}: expected ${show(e.value)}, got ${show(got)}`);
    });
  } finally {
    r.close();
  }
}

async function checkStream(c, file) {
  let i = 0;
  try {
    for await (const it of new hurray.StreamReader(fs.createReadStream(file)).items()) {
      if (i >= c.items.length) throw new Error(`more than the expected ${c.items.length} items in the stream`);
      try {
        checkItem(c.items[i], it);
      } finally {
        it.close();
      }
      i++;
    }
  } catch (e) {
    if (e.code && e.code.startsWith('ERR_HURRAY_')) throw new Error(`item ${i}: ${e.message}`);
    throw e;
  }
  if (i !== c.items.length) throw new Error(`the stream ends after ${i} items, expected ${c.items.length}`);
}

async function consume(cases, dirs) {
  for (const dir of dirs) {
    const producer = path.basename(path.resolve(dir));
    for (const c of cases) {
      for (const [ext, container] of [['hrry', 'file'], ['hrrys', 'stream']]) {
        const file = path.join(dir, `${c.name}.${ext}`);
        const line = `result\t${producer}\t${container}\t${c.name}\t`;
        if (fs.existsSync(`${file}.na`)) {
          process.stdout.write(`${line}na\tproducer: ${fs.readFileSync(`${file}.na`, 'utf8').trim()}\n`);
          continue;
        }
        try {
          if (!fs.existsSync(file)) throw new Error(`no output ${file}`);
          if (ext === 'hrry') checkFile(c, file);
          else await checkStream(c, file);
          process.stdout.write(`${line}pass\t\n`);
        } catch (e) {
          process.stdout.write(`${line}fail\t${String(e.message).replace(/[\t\n]/g, ' ')}\n`);
        }
      }
    }
  }
}

// ---------------------------------------------------------------- demo

const crc32 = zlib.crc32
  ? (crc, bytes) => zlib.crc32(bytes, crc)
  : (() => {
      const table = new Uint32Array(256).map((_, n) => {
        let c = n;
        for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
        return c;
      });
      return (crc, bytes) => {
        let c = ~crc >>> 0;
        for (let i = 0; i < bytes.length; i++) c = table[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
        return ~c >>> 0;
      };
    })();

/** How many more times `views` opens and views the file after the first pass; the
 * best of them is the "warm" figure. */
const WARM_RUNS = 200;

/** One pass: opens `file` and views every tensor's buffers (Uint8Arrays over
 * ArrayBuffers over the mapping), with the bulk call `FileReader.views()` (no
 * Tensor object per tensor). Returns the reader and [name, views] rows. */
function openAndView(file) {
  const r = hurray.FileReader.open(file);
  const names = r.names;
  const list = r.views().map((abs, i) => [names[i], abs.map((ab) => new Uint8Array(ab))]);
  return [r, list];
}

/** Closes a pass's reader; its views are released when collected. */
function closeViews([r]) {
  r.close();
}

/** Opens `file`, views every tensor's buffers, prints "view NAME CRC32" per tensor
 * and "time SECONDS" (open + views only, this first pass in a fresh process); then
 * WARM_RUNS more passes in this process and "warm SECONDS": the fastest (closing is
 * outside the timing, as in the first). */
function views(file) {
  const t0 = process.hrtime.bigint();
  const first = openAndView(file);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  for (const [n, bufs] of first[1]) {
    let crc = 0;
    for (const v of bufs) crc = crc32(crc, v);
    process.stdout.write(`view\t${n}\t${(crc >>> 0).toString(16).padStart(8, '0')}\n`);
  }
  process.stdout.write(`time\t${secs.toFixed(6)}\n`);
  const count = first[1].length;
  closeViews(first);
  let warm = Infinity;
  for (let w = 0; w < WARM_RUNS; w++) {
    const t0 = process.hrtime.bigint();
    const pass = openAndView(file);
    warm = Math.min(warm, Number(process.hrtime.bigint() - t0) / 1e9);
    if (pass[1].length !== count) {
      throw new Error(`a warm pass listed ${pass[1].length} tensors, the first ${count}`);
    }
    closeViews(pass);
  }
  process.stdout.write(`warm\t${warm.toFixed(6)}\n`);
}

// Opens FILE, reads every tensor name and every KV value in full (with metadata(),
// or, ranged, key by key with metadataRange windows of 65536 elements), and prints
// what it read, like every language's metadata command.
function metadata(file, ranged) {
  const r = hurray.FileReader.open(file);
  const names = r.names;
  let nameBytes = 0;
  for (const n of names) nameBytes += Buffer.byteLength(n);
  let elements = 0;
  let bytes = 0;
  const count = (v) => {
    const one = (x) => {
      elements++;
      if (typeof x === 'string') bytes += Buffer.byteLength(x);
      else if (Buffer.isBuffer(x)) bytes += x.length;
    };
    if (Array.isArray(v)) v.forEach(one);
    else one(v);
  };
  const keys = r.keys;
  let held = null;
  if (ranged) {
    for (const k of keys) {
      let isArray = true;
      try {
        r.metadataRange(k, 0, 0);
      } catch (e) {
        if (e.code !== 'ERR_HURRAY_UNSUPPORTED') throw e;
        isArray = false;
      }
      if (!isArray) {
        count(r.value(k));
        continue;
      }
      const n = r.metadataLength(k);
      for (let at = 0; at < n; at += 65536) count(r.metadataRange(k, at, Math.min(65536, n - at)));
    }
  } else {
    try {
      held = r.metadata();
      for (const k of keys) count(held[k]);
    } catch (e) {
      // The whole-value bound refused an array: memory stays bounded.
      if (e.code !== 'ERR_HURRAY_LIMIT') throw e;
      process.stdout.write(`kv_refused\t${e.message}\n`);
    }
  }
  process.stdout.write(`kv_entries\t${keys.length}\nkv_elements\t${elements}\nkv_value_bytes\t${bytes}\n`);
  process.stdout.write(`tensors\t${names.length}\nname_bytes\t${nameBytes}\n`);
  r.close();
  return held;
}

// tagNames: every element-type and layout tag (0..255) as hurray.typeName and
// hurray.layoutName render it, one "type|layout<TAB>0x2a<TAB>NAME" line each (cargo
// xtask matrix compares these lines across languages).
function tagNames() {
  const hex = (t) => `0x${t.toString(16).padStart(2, '0')}`;
  const lines = [];
  for (let t = 0; t < 256; t++) lines.push(`type\t${hex(t)}\t${hurray.typeName(t)}`);
  for (let t = 0; t < 256; t++) lines.push(`layout\t${hex(t)}\t${hurray.layoutName(t)}`);
  process.stdout.write(lines.join('\n') + '\n');
}

// ---------------------------------------------------------------- network column

/** GETs "CASE:NAME" for every top-level item of every case from the server at
 *  `addr` and writes OUT/CASE.hrry with them (producer order, `produce`'s options
 *  and KV). Returns the number of failed cases. */
async function netGet(addr, cases, out) {
  fs.mkdirSync(out, { recursive: true });
  const client = await hurray.connect(addr);
  let failed = 0;
  try {
    for (const c of cases) {
      const got = [];
      try {
        for (const s of c.items) got.push(await client.get(`${c.name}:${s.name}`));
        const w = hurray.FileWriter.create(path.join(out, `${c.name}.hrry`), { durable: false });
        try {
          c.items.forEach((s, i) =>
            got[i] instanceof hurray.Item ? w.writeItem(s.name, got[i]) : w.writeTensor(s.name, got[i]),
          );
          for (const e of c.kv) addKV(w, e);
          w.finish();
        } finally {
          w.close();
        }
      } catch (e) {
        process.stderr.write(`node net-get: case ${c.name}: ${e.message}\n`);
        failed++;
      } finally {
        for (const g of got) g.close();
      }
    }
  } finally {
    client.close();
  }
  return failed;
}

/** PUTs every top-level item of DIR/CASE.hrry (composites as composites) under
 *  "CASE:NAME". Returns the number of failed cases. */
async function netPut(addr, cases, dir) {
  const client = await hurray.connect(addr);
  let failed = 0;
  try {
    for (const c of cases) {
      const file = path.join(dir, `${c.name}.hrry`);
      if (!fs.existsSync(file)) {
        process.stderr.write(`na ${c.name}: no ${file}\n`);
        continue;
      }
      const r = hurray.FileReader.open(file);
      try {
        for (const s of c.items) {
          const it = r.item(s.name);
          try {
            await client.put(`${c.name}:${s.name}`, it);
          } finally {
            it.close();
          }
        }
      } catch (e) {
        process.stderr.write(`node net-put: case ${c.name}: ${e.message}\n`);
        failed++;
      } finally {
        r.close();
      }
    }
  } finally {
    client.close();
  }
  return failed;
}

/** The demo's network step: reads FILE only for its tensor names (index order),
 *  GETs each over one connection and prints "view NAME CRC32" (as `views`: CRC-32
 *  of the buffers' bytes, in order) and "time SECONDS" (connect plus every GET). */
async function netViews(addr, file) {
  const r = hurray.FileReader.open(file);
  const names = r.names;
  r.close();
  const got = [];
  try {
    const t0 = process.hrtime.bigint();
    const client = await hurray.connect(addr);
    try {
      for (const n of names) got.push(await client.get(n));
    } finally {
      client.close();
    }
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    names.forEach((n, i) => {
      let crc = 0;
      for (const ab of got[i].buffers()) crc = crc32(crc, new Uint8Array(ab));
      process.stdout.write(`view\t${n}\t${(crc >>> 0).toString(16).padStart(8, '0')}\n`);
    });
    process.stdout.write(`time\t${secs.toFixed(6)}\n`);
  } finally {
    for (const g of got) g.close();
  }
}

async function main() {
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === 'produce' && args.length === 2) {
    const cases = parseCases(args[0]);
    fs.mkdirSync(args[1], { recursive: true });
    let failed = 0;
    for (const c of cases) {
      try {
        produceCase(c, args[1]);
      } catch (e) {
        process.stderr.write(`node producer: case ${c.name}: ${e.message}\n`);
        failed++;
      }
    }
    process.exitCode = failed > 0 ? 1 : 0;
  } else if (cmd === 'consume' && args.length >= 1) {
    await consume(parseCases(args[0]), args.slice(1));
  } else if (cmd === 'views' && args.length === 1) {
    views(args[0]);
  } else if (cmd === 'hostile' && args.length === 1) {
    await hostile(hurray, args[0]);
  } else if (cmd === 'metadata' && (args.length === 1 || (args.length === 2 && args[1] === 'ranged'))) {
    metadata(args[0], args.length === 2);
  } else if ((cmd === 'net-get' || cmd === 'net-put') && args.length === 3) {
    const run = cmd === 'net-get' ? netGet : netPut;
    process.exitCode = (await run(args[0], parseCases(args[1]), args[2])) > 0 ? 1 : 0;
  } else if (cmd === 'net-views' && args.length === 2) {
    await netViews(args[0], args[1]);
  } else if (cmd === 'names' && args.length === 0) {
    tagNames();
  } else {
    process.stderr.write('usage: node matrix.js produce CASES OUT | consume CASES DIR... | views FILE | hostile DIR | metadata FILE [ranged] | net-get ADDR CASES OUT | net-put ADDR CASES DIR | net-views ADDR FILE\n');
    process.exitCode = 2;
  }
}

main().catch((e) => {
  process.stderr.write(`node matrix: ${e.stack || e}\n`);
  process.exitCode = 1;
});
