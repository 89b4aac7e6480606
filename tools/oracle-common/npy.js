// The file exchange of Stowage's test oracles (tools/ort-oracle/run.js, tools/tflite-oracle/run.js): .npy tensors
// read and written, and the error a run reports. Plain Node.js, no package; each oracle's run.js requires it.
'use strict';

const fs = require('fs');

// An error of one run: the message, and the exit code of a single run (1, or 2 for usage errors).
class OracleError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

function fail(message, code = 1) {
  throw new OracleError(message, code);
}

// dtype name (ONNX Runtime's and TFLite's web API's names) -> npy descriptor, element size, typed array.
const DTYPES = {
  float32: { descr: '<f4', size: 4, array: Float32Array },
  float64: { descr: '<f8', size: 8, array: Float64Array },
  int8: { descr: '|i1', size: 1, array: Int8Array },
  uint8: { descr: '|u1', size: 1, array: Uint8Array },
  int16: { descr: '<i2', size: 2, array: Int16Array },
  uint16: { descr: '<u2', size: 2, array: Uint16Array },
  int32: { descr: '<i4', size: 4, array: Int32Array },
  uint32: { descr: '<u4', size: 4, array: Uint32Array },
  int64: { descr: '<i8', size: 8, array: BigInt64Array },
  uint64: { descr: '<u8', size: 8, array: BigUint64Array },
  bool: { descr: '|b1', size: 1, array: Uint8Array },
};

function dtypeFromDescr(descr, file) {
  const d = descr.length === 3 && '<|='.includes(descr[0]) ? descr.slice(1) :
            (descr.length === 3 && descr[0] === '>' && descr[2] === '1' ? descr.slice(1) : null);
  if (d === null) fail(`${file}: unsupported .npy dtype '${descr}' (big-endian or unknown)`);
  for (const [name, t] of Object.entries(DTYPES)) {
    if (t.descr.slice(1) === d) return name;
  }
  fail(`${file}: unsupported .npy dtype '${descr}'`);
}

function readNpy(file) {
  let bytes;
  try { bytes = fs.readFileSync(file); } catch (e) { fail(`cannot read input ${file}: ${e.message}`); }
  if (bytes.length < 10 || bytes.toString('latin1', 0, 6) !== '\x93NUMPY') fail(`${file}: not an .npy file`);
  const major = bytes[6];
  let headerLen, offset;
  if (major === 1) { headerLen = bytes.readUInt16LE(8); offset = 10; }
  else if (major === 2 || major === 3) {
    if (bytes.length < 12) fail(`${file}: truncated .npy header`);
    headerLen = bytes.readUInt32LE(8); offset = 12;
  } else fail(`${file}: unsupported .npy version ${major}`);
  if (offset + headerLen > bytes.length) fail(`${file}: truncated .npy header`);
  const header = bytes.toString(major === 3 ? 'utf8' : 'latin1', offset, offset + headerLen);
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const order = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) fail(`${file}: malformed .npy header: ${header.trim()}`);
  if (order[1] === 'True') fail(`${file}: Fortran-order .npy arrays are not supported`);
  const dtype = dtypeFromDescr(descr[1], file);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map((s) => {
    if (!/^\d+$/.test(s)) fail(`${file}: bad dimension '${s}' in .npy header`);
    return Number(s);
  });
  const count = dims.reduce((a, b) => a * b, 1);
  const t = DTYPES[dtype];
  const dataOffset = offset + headerLen;
  if (bytes.length - dataOffset !== count * t.size) {
    fail(`${file}: ${bytes.length - dataOffset} data bytes, the header's shape [${dims}] of ${dtype} ` +
         `needs ${count * t.size}`);
  }
  // Copy into a fresh, aligned buffer for the typed array.
  const buffer = new ArrayBuffer(count * t.size);
  new Uint8Array(buffer).set(bytes.subarray(dataOffset));
  return { dtype, dims, data: new t.array(buffer) };
}

function npyImage(dtype, dims, data) {
  const t = DTYPES[dtype];
  if (!t) return null;
  const shapeText = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${t.descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  // Pad with spaces and a final newline so the data starts at a multiple of 64 bytes, as NumPy does.
  let prefix = 10;
  let total = prefix + header.length + 1;
  let major = 1;
  if (total + 63 > 65535 + 10) { major = 2; prefix = 12; total = prefix + header.length + 1; }
  header = header + ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(prefix);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = major;
  head[7] = 0;
  if (major === 1) head.writeUInt16LE(header.length, 8); else head.writeUInt32LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), body]);
}

module.exports = { OracleError, fail, DTYPES, readNpy, npyImage };
