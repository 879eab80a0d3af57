'use strict';
// Throughput of one GET over the Node client (issue 18, Must show 3).
//
//     node net_get.js ADDR KEY [REPEATS]
//
// GETs KEY from the Hurray server at ADDR (host:port) REPEATS times (default 3) on
// one connection and prints the fastest as one line `net_get node BYTES SECONDS`
// (data bytes of the tensor; wall seconds from the call to the resolved promise).
// `cargo xtask bench` divides BYTES by SECONDS and compares with the Rust client.

const hurray = require('..');

async function main(argv) {
  if (argv.length < 2 || argv.length > 3) {
    console.error('usage: node net_get.js ADDR KEY [REPEATS]');
    return 2;
  }
  const [addr, key] = argv;
  const repeats = argv.length === 3 ? Number(argv[2]) : 3;
  let best = Infinity;
  let bytes = 0;
  const c = await hurray.connect(addr);
  try {
    for (let i = 0; i < repeats; i++) {
      const t0 = process.hrtime.bigint();
      const t = await c.get(key);
      const dt = Number(process.hrtime.bigint() - t0) / 1e9;
      bytes = t.descriptor().buffers().reduce((a, b) => a + b.byteSize, 0);
      t.close();
      best = Math.min(best, dt);
    }
  } finally {
    c.close();
  }
  console.log(`net_get node ${bytes} ${best.toFixed(6)}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
