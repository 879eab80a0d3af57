'use strict';
// The Node consumer of the hostile corpus (tests/matrix/rust/src/hostile.rs):
//
//   node matrix.js hostile DIR
//
// For every line "CASE RULE ..." of DIR/manifest.tsv it opens DIR/CASE.hrry with
// FileReader.open and takes every item by name (FileReader.item) with a Uint8Array
// view of every buffer of it and its members (Tensor.buffer, every byte read), then
// reads DIR/CASE.hrrys to its end with StreamReader.items(), viewing every item the
// same way. A container passes when the read threw an Error whose `code` is
// HURRAY_ERR_FORMAT and whose message names RULE:
//
//   result  hostile  file|stream  CASE  pass|fail  DETAIL

const fs = require('node:fs');
const path = require('node:path');

/** Views every buffer of the item's tensor and of its members, reading each byte. */
function viewItem(it) {
  const t = it.tensor;
  let sink = 0;
  try {
    for (let b = 0; b < t.bufferCount; b++) {
      for (const x of new Uint8Array(t.buffer(b))) sink ^= x;
    }
  } finally {
    t.close();
  }
  for (const m of it.members) {
    try {
      sink ^= viewItem(m);
    } finally {
      m.close();
    }
  }
  return sink;
}

function readFile(hurray, file) {
  const r = hurray.FileReader.open(file);
  try {
    for (const name of r.names) {
      const it = r.item(name);
      try {
        viewItem(it);
      } finally {
        it.close();
      }
    }
  } finally {
    r.close();
  }
}

async function readStream(hurray, file) {
  for await (const it of new hurray.StreamReader(fs.createReadStream(file)).items()) {
    try {
      viewItem(it);
    } finally {
      it.close();
    }
  }
}

/** ['pass', message] when `read` threw a HURRAY_ERR_FORMAT error naming `rule`. */
async function judge(rule, read) {
  try {
    await read();
  } catch (e) {
    const msg = String(e && e.message);
    if (e && e.code === 'ERR_HURRAY_FORMAT' && msg.includes(rule)) return ['pass', msg];
    return ['fail', `expected an ERR_HURRAY_FORMAT error naming ${rule}, got ${e && e.code}: ${msg}`];
  }
  return ['fail', `read without error; expected ${rule}`];
}

/** Prints a result line per (case, container) of `dir`'s corpus. */
async function hostile(hurray, dir) {
  const lines = fs.readFileSync(path.join(dir, 'manifest.tsv'), 'utf8').split('\n');
  for (const line of lines) {
    const [name, rule] = line.split('\t');
    if (!name || !rule) continue;
    for (const [container, ext, read] of [
      ['file', 'hrry', readFile],
      ['stream', 'hrrys', readStream],
    ]) {
      const file = path.join(dir, `${name}.${ext}`);
      const [status, detail] = await judge(rule, () => read(hurray, file));
      process.stdout.write(`result\thostile\t${container}\t${name}\t${status}\t${detail.replace(/[\t\r\n]/g, ' ')}\n`);
    }
  }
}

module.exports = { hostile };
