#!/usr/bin/env node
// Runs one ONNX model with ONNX Runtime (CPU, one thread) and writes its outputs as .npy files: the reference
// ("oracle") that Stowage's tests compare `stowage run` with (tests/e2e/OrtOracle.h).
//
// Usage: node run.js --model M.onnx --out DIR [--level disabled|basic|extended|all]
//                    [--input name=file.npy | --input file.npy ...] [--dump-intermediates]
//        node run.js --batch JOBS.json
// --batch: JOBS.json is an array of runs, each {"model", "out", "level"?, "inputs"?: [spec, ...], "dumpIntermediates"?}
// with the options' meanings; one process runs them all (Node and ONNX Runtime start once: ~0.25 s saved per model)
// and prints one JSON line per run in order, {"job": i, "outputs": [...]} or {"job": i, "error": "..."}.
//
// Inputs: `name=file.npy` binds by input name; a bare file takes the next model input in the model's order.
// .npy: versions 1.0/2.0/3.0, C order, little-endian; dtypes float32, float64, int8, uint8, int16, uint16,
// int32, int64, uint32, uint64, bool.
// Outputs: DIR/<index>_<name with every character outside [A-Za-z0-9._-] replaced by '_'>.npy, in the model's output
// order, and one JSON line on stdout: {"outputs": [{"name", "file", "dtype", "shape"}, ...]}.
// --level: ONNX Runtime's graph optimisation level, default `disabled`: the model as ONNX defines it, node by node.
// At higher levels ONNX Runtime fuses nodes depending on the CPU (on an AVX2 machine without VNNI, uint8 QDQ Conv
// becomes QLinearConv, whose u8s8 kernel saturates int16 pairs), so results there are not a portable reference.
// --dump-intermediates: every node output of the main graph (not of subgraphs) that is not already a graph output
// becomes an extra graph output, after the model's own; the model is edited at the protobuf level, the added outputs
// carry no type (ONNX Runtime infers it). Tests use it to calibrate quantisation ranges.
// Errors: a message on stderr and exit code 1 (2 for usage errors). Installed by `make deps`; see README.md,
// "ONNX Runtime as the test oracle".
'use strict';

const fs = require('fs');
const path = require('path');
const { OracleError, fail, readNpy, npyImage } = require('../oracle-common/npy.js');

function usage() {
  return 'usage: node run.js --model M.onnx --out DIR [--level disabled|basic|extended|all] ' +
         '[--input name=file.npy ...] [--dump-intermediates]\n       node run.js --batch JOBS.json';
}

function parseArgs(argv) {
  const args = { model: null, out: null, level: 'disabled', inputs: [], dumpIntermediates: false, batch: null };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value\n${usage()}`, 2);
      return argv[++i];
    };
    if (a === '--model') args.model = value();
    else if (a === '--out') args.out = value();
    else if (a === '--level') args.level = value();
    else if (a === '--input') args.inputs.push(value());
    else if (a === '--dump-intermediates') args.dumpIntermediates = true;
    else if (a === '--batch') args.batch = value();
    else if (a === '--help' || a === '-h') { process.stdout.write(usage() + '\n'); process.exit(0); }
    else fail(`unknown argument '${a}'\n${usage()}`, 2);
  }
  if (args.batch !== null) {
    if (args.model || args.out || args.inputs.length > 0) fail(`--batch takes no other option\n${usage()}`, 2);
    return args;
  }
  if (!args.model) fail(`--model is required\n${usage()}`, 2);
  if (!args.out) fail(`--out is required\n${usage()}`, 2);
  if (!['disabled', 'basic', 'extended', 'all'].includes(args.level)) {
    fail(`--level must be disabled, basic, extended or all, not '${args.level}'`, 2);
  }
  return args;
}

// ---- protobuf editing for --dump-intermediates ----------------------------------------------------------------

function readVarint(buf, pos) {
  let value = 0n, shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++];
    value |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [value, pos];
    shift += 7n;
  }
}

function writeVarint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
}

// Fields of one message: [{field, wire, start, end, payloadStart}] (payload = the bytes of a length-delimited field).
function fields(buf) {
  const result = [];
  let pos = 0;
  while (pos < buf.length) {
    const start = pos;
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n), wire = Number(key & 7n);
    let payloadStart = pos;
    if (wire === 0) [, pos] = readVarint(buf, pos);
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      payloadStart = pos;
      pos += Number(len);
    } else throw new Error(`unsupported wire type ${wire}`);
    if (pos > buf.length) throw new Error('truncated field');
    result.push({ field, wire, start, end: pos, payloadStart });
  }
  return result;
}

function lengthDelimited(field, payload) {
  return Buffer.concat([writeVarint((field << 3) | 2), writeVarint(payload.length), payload]);
}

// ModelProto.graph = 7; GraphProto.node = 1, initializer = 5, input = 11, output = 12; NodeProto.output = 2;
// ValueInfoProto.name = 1; TensorProto.name = 8.
function addIntermediateOutputs(modelBytes) {
  const top = fields(modelBytes);
  const graphField = top.find((f) => f.field === 7 && f.wire === 2);
  if (!graphField) throw new Error('the model has no graph');
  const graph = modelBytes.subarray(graphField.payloadStart, graphField.end);
  const str = (msg, f) => msg.toString('utf8', f.payloadStart, f.end);
  const nameOf = (msg, nameField) => {
    const f = fields(msg).find((x) => x.field === nameField && x.wire === 2);
    return f ? str(msg, f) : '';
  };
  const skip = new Set(), added = [];
  for (const f of fields(graph)) {
    const sub = graph.subarray(f.payloadStart, f.end);
    if (f.wire !== 2) continue;
    if (f.field === 12 || f.field === 11) skip.add(nameOf(sub, 1));
    else if (f.field === 5) skip.add(nameOf(sub, 8));
  }
  for (const f of fields(graph)) {
    if (f.field !== 1 || f.wire !== 2) continue;
    const node = graph.subarray(f.payloadStart, f.end);
    for (const o of fields(node)) {
      if (o.field !== 2 || o.wire !== 2) continue;
      const name = str(node, o);
      if (name === '' || skip.has(name)) continue;  // '' = an absent optional output
      skip.add(name);
      added.push(name);
    }
  }
  const extra = added.map((n) => lengthDelimited(12, lengthDelimited(1, Buffer.from(n, 'utf8'))));
  const newGraph = Buffer.concat([graph, ...extra]);
  return Buffer.concat([modelBytes.subarray(0, graphField.start), lengthDelimited(7, newGraph),
                        modelBytes.subarray(graphField.end)]);
}

// ---- main -------------------------------------------------------------------------------------------------------

// Runs one model (args as parseArgs returns them) and writes its outputs; returns their listing.
async function runOne(ort, args) {
  let modelBytes;
  try { modelBytes = fs.readFileSync(args.model); } catch (e) { fail(`cannot read model ${args.model}: ${e.message}`); }
  if (args.dumpIntermediates) {
    try {
      modelBytes = addIntermediateOutputs(modelBytes);
    } catch (e) {
      fail(`${args.model}: cannot edit the model: ${e.message}`);
    }
  }
  let session;
  try {
    session = await ort.InferenceSession.create(modelBytes, {
      graphOptimizationLevel: args.level, intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    });
  } catch (e) {
    fail(`${args.model}: ONNX Runtime cannot load the model: ${e.message}`);
  }

  const feeds = {};
  let next = 0;
  for (const spec of args.inputs) {
    const eq = spec.indexOf('=');
    let name, file;
    if (eq > 0 && session.inputNames.includes(spec.slice(0, eq))) {
      name = spec.slice(0, eq);
      file = spec.slice(eq + 1);
    } else if (eq > 0 && !fs.existsSync(spec)) {
      fail(`--input ${spec}: the model has no input named '${spec.slice(0, eq)}' ` +
           `(inputs: ${session.inputNames.join(', ')})`);
    } else {
      while (next < session.inputNames.length && session.inputNames[next] in feeds) ++next;
      if (next >= session.inputNames.length) {
        fail(`too many inputs: the model has ${session.inputNames.length} (${session.inputNames.join(', ')})`);
      }
      name = session.inputNames[next++];
      file = spec;
    }
    if (name in feeds) fail(`input '${name}' given twice`);
    const npy = readNpy(file);
    feeds[name] = new ort.Tensor(npy.dtype, npy.data, npy.dims);
  }
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length > 0) {
    fail(`missing inputs: ${missing.join(', ')} (model inputs: ${session.inputNames.join(', ')})`);
  }

  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    fail(`${args.model}: ONNX Runtime failed to run: ${e.message}`);
  }

  try { fs.mkdirSync(args.out, { recursive: true }); } catch (e) { fail(`cannot create ${args.out}: ${e.message}`); }
  const listed = [];
  session.outputNames.forEach((name, index) => {
    const t = results[name];
    const file = path.join(args.out, `${index}_${name.replace(/[^A-Za-z0-9._-]/g, '_')}.npy`);
    const image = npyImage(t.type, t.dims.map(Number), t.data);
    if (image === null) fail(`output '${name}' has dtype ${t.type}, which this tool cannot write as .npy`);
    try { fs.writeFileSync(file, image); } catch (e) { fail(`cannot write ${file}: ${e.message}`); }
    listed.push({ name, file, dtype: t.type, shape: t.dims.map(Number) });
  });
  return listed;
}

// The runs of a --batch file, each checked as the command line's options are.
function readBatch(file) {
  let jobs;
  try {
    jobs = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    fail(`--batch ${file}: cannot read it as JSON: ${e.message}`, 2);
  }
  if (!Array.isArray(jobs)) fail(`--batch ${file}: expected an array of runs`, 2);
  return jobs.map((job, i) => {
    if (job === null || typeof job !== 'object' || typeof job.model !== 'string' || typeof job.out !== 'string') {
      fail(`--batch ${file}: run ${i} needs "model" and "out" strings`, 2);
    }
    const argv = ['--model', job.model, '--out', job.out, '--level', job.level || 'disabled'];
    for (const spec of job.inputs || []) argv.push('--input', String(spec));
    if (job.dumpIntermediates) argv.push('--dump-intermediates');
    return parseArgs(argv);
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const jobs = args.batch !== null ? readBatch(args.batch) : null;
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    fail(`onnxruntime-node is not installed in ${__dirname}/node_modules (run \`make deps\`, or ` +
         `\`npm ci --ignore-scripts\` in ${__dirname}): ${e.message}`);
  }
  if (jobs === null) {
    process.stdout.write(JSON.stringify({ outputs: await runOne(ort, args) }) + '\n');
    return;
  }
  for (let i = 0; i < jobs.length; ++i) {
    let line;
    try {
      line = { job: i, outputs: await runOne(ort, jobs[i]) };
    } catch (e) {
      if (!(e instanceof OracleError)) throw e;
      line = { job: i, error: e.message };
    }
    process.stdout.write(JSON.stringify(line) + '\n');
  }
}

main().catch((e) => {
  process.stderr.write(`ort-oracle: ${e instanceof OracleError ? e.message : (e && e.stack ? e.stack : String(e))}\n`);
  process.exit(e instanceof OracleError ? e.code : 1);
});
