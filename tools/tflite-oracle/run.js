#!/usr/bin/env node
// Runs one TFLite model with TFLite's own interpreter and writes its outputs as .npy files: the reference ("oracle")
// that Stowage's tests compare `stowage run` on .tflite files with (tests/e2e/TfliteOracle.h).
//
// Usage: node run.js --model M.tflite --out DIR [--input name=file.npy | --input file.npy ...]
//        node run.js --batch JOBS.json
// --batch: JOBS.json is an array of runs, each {"model", "out", "inputs"?: [spec, ...]} with the options' meanings; one
// process runs them all (Node and the WebAssembly interpreter start once: ~0.7 s saved per model) and prints one JSON
// line per run in order, {"job": i, "outputs": [...]} or {"job": i, "error": "..."}.
//
// The interpreter is the WebAssembly build of TFLite inside the npm package @tensorflow/tfjs-tflite (pinned by
// package-lock.json): its Emscripten factory wasm/tflite_web_api_cc.js (the plain variant: no SIMD, no threads, so it
// runs the same on any Node) is loaded directly and given the .wasm file's bytes, so neither a browser nor the network
// is needed; TFLiteWebModelRunner runs the model on one thread. It applies the XNNPACK delegate to what it supports
// (float operators), the builtin kernels to the rest: float models compute as TFLite does on a CPU; int8 models may
// round differently from TFLite Micro's reference kernels (docs/testing.md, "TFLite's interpreter as an oracle").
//
// Inputs: `name=file.npy` binds by input tensor name; a bare file takes the next model input in the model's order.
// The .npy's dtype must be the input's and its element count the input's (the shape is the model's).
// .npy: see ../oracle-common/npy.js (float32, float64, int8, uint8, int16, uint16, int32, uint32, bool, ...).
// Outputs: DIR/<index>_<name with every character outside [A-Za-z0-9._-] replaced by '_'>.npy, in the model's output
// order, and one JSON line on stdout: {"outputs": [{"name", "file", "dtype", "shape"}, ...]}. The interpreter's own
// messages (e.g. "Created TensorFlow Lite XNNPACK delegate") go to stderr; an error quotes its last ones.
// Errors: a message on stderr and exit code 1 (2 for usage errors). Installed by `make deps`; see docs/testing.md.
'use strict';

const fs = require('fs');
const path = require('path');
const { OracleError, fail, readNpy, npyImage } = require('../oracle-common/npy.js');

const WASM_DIR = path.join(__dirname, 'node_modules', '@tensorflow', 'tfjs-tflite', 'wasm');

function usage() {
  return 'usage: node run.js --model M.tflite --out DIR [--input name=file.npy ...]\n' +
         '       node run.js --batch JOBS.json';
}

function parseArgs(argv) {
  const args = { model: null, out: null, inputs: [], batch: null };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value\n${usage()}`, 2);
      return argv[++i];
    };
    if (a === '--model') args.model = value();
    else if (a === '--out') args.out = value();
    else if (a === '--input') args.inputs.push(value());
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
  return args;
}

// The interpreter's messages of the current run (the last few quoted in errors).
let interpreterLog = [];

function logLine(text) {
  interpreterLog.push(String(text));
  if (interpreterLog.length > 20) interpreterLog.shift();
  process.stderr.write(`tflite: ${text}\n`);
}

function lastMessages() {
  return interpreterLog.length > 0 ? ` (interpreter: ${interpreterLog.slice(-5).join(' | ')})` : '';
}

// The Emscripten module of the plain WebAssembly build, instantiated from the .wasm file's bytes.
async function loadInterpreter() {
  let factory, wasmBinary;
  try {
    factory = require(path.join(WASM_DIR, 'tflite_web_api_cc.js'));
    wasmBinary = fs.readFileSync(path.join(WASM_DIR, 'tflite_web_api_cc.wasm'));
  } catch (e) {
    fail(`@tensorflow/tfjs-tflite is not installed in ${__dirname}/node_modules (run \`make deps\`, or ` +
         `\`npm ci --ignore-scripts\` in ${__dirname}): ${e.message}`);
  }
  // print/printErr: the module's stdout would mix with the JSON lines.
  return factory({ wasmBinary, print: logLine, printErr: logLine });
}

// Copies an embind vector of tensor infos into an array of {name, dataType, dims, view} (view: the typed array on
// the WebAssembly heap, valid until the runner is deleted or the heap grows) and frees the vector.
function tensorInfos(vector) {
  const list = [];
  for (let i = 0; i < vector.size(); ++i) {
    const t = vector.get(i);
    const dims = String(t.shape).split(',').filter((s) => s.length > 0).map(Number);
    list.push({ name: t.name, dataType: t.dataType, dims, data: () => t.data() });
  }
  vector.delete();
  return list;
}

// Runs one model (args as parseArgs returns them) and writes its outputs; returns their listing.
function runOne(module, args) {
  interpreterLog = [];
  let modelBytes;
  try { modelBytes = fs.readFileSync(args.model); } catch (e) { fail(`cannot read model ${args.model}: ${e.message}`); }
  const pointer = module._malloc(modelBytes.length);
  let runner = null;
  try {
    module.HEAPU8.set(modelBytes, pointer);
    const created = module.TFLiteWebModelRunner.CreateFromBufferAndOptions(pointer, modelBytes.length, {
      numThreads: 1, enableProfiling: false, maxProfilingBufferEntries: 1024,
    });
    if (!created.ok()) {
      const message = created.errorMessage();
      created.delete();
      fail(`${args.model}: the TFLite interpreter cannot load the model: ${message}${lastMessages()}`);
    }
    runner = created.value();
    created.delete();
    const modelInputs = tensorInfos(runner.GetInputs());
    const names = modelInputs.map((t) => t.name);

    // Bind the input files.
    const bound = new Array(modelInputs.length).fill(null);
    let next = 0;
    for (const spec of args.inputs) {
      const eq = spec.indexOf('=');
      let index, file;
      if (eq > 0 && names.includes(spec.slice(0, eq))) {
        index = names.indexOf(spec.slice(0, eq));
        file = spec.slice(eq + 1);
      } else if (eq > 0 && !fs.existsSync(spec)) {
        fail(`--input ${spec}: the model has no input named '${spec.slice(0, eq)}' (inputs: ${names.join(', ')})`);
      } else {
        while (next < bound.length && bound[next] !== null) ++next;
        if (next >= bound.length) fail(`too many inputs: the model has ${names.length} (${names.join(', ')})`);
        index = next++;
        file = spec;
      }
      if (bound[index] !== null) fail(`input '${names[index]}' given twice`);
      bound[index] = file;
    }
    const missing = names.filter((n, i) => bound[i] === null);
    if (missing.length > 0) fail(`missing inputs: ${missing.join(', ')} (model inputs: ${names.join(', ')})`);
    modelInputs.forEach((t, i) => {
      const npy = readNpy(bound[i]);
      const count = t.dims.reduce((a, b) => a * b, 1);
      const count2 = npy.dims.reduce((a, b) => a * b, 1);
      if (npy.dtype !== t.dataType) fail(`${bound[i]}: dtype ${npy.dtype}, input '${t.name}' is ${t.dataType}`);
      if (count2 !== count) {
        fail(`${bound[i]}: shape [${npy.dims}], input '${t.name}' has shape [${t.dims}] (${count} elements)`);
      }
      t.data().set(npy.data);
    });

    if (!runner.Infer()) fail(`${args.model}: the TFLite interpreter failed to run the model${lastMessages()}`);

    try { fs.mkdirSync(args.out, { recursive: true }); } catch (e) { fail(`cannot create ${args.out}: ${e.message}`); }
    const listed = [];
    tensorInfos(runner.GetOutputs()).forEach((t, index) => {
      const file = path.join(args.out, `${index}_${t.name.replace(/[^A-Za-z0-9._-]/g, '_')}.npy`);
      const image = npyImage(t.dataType, t.dims, t.data().slice());
      if (image === null) fail(`output '${t.name}' has dtype ${t.dataType}, which this tool cannot write as .npy`);
      try { fs.writeFileSync(file, image); } catch (e) { fail(`cannot write ${file}: ${e.message}`); }
      listed.push({ name: t.name, file, dtype: t.dataType, shape: t.dims });
    });
    return listed;
  } finally {
    if (runner !== null) runner.delete();
    module._free(pointer);
  }
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
    const argv = ['--model', job.model, '--out', job.out];
    for (const spec of job.inputs || []) argv.push('--input', String(spec));
    return parseArgs(argv);
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const jobs = args.batch !== null ? readBatch(args.batch) : null;
  let module = await loadInterpreter();
  if (jobs === null) {
    process.stdout.write(JSON.stringify({ outputs: runOne(module, args) }) + '\n');
    return;
  }
  for (let i = 0; i < jobs.length; ++i) {
    let line;
    try {
      line = { job: i, outputs: runOne(module, jobs[i]) };
    } catch (e) {
      if (e instanceof OracleError) {
        line = { job: i, error: e.message };
      } else {
        // A trap inside the WebAssembly module (an abort, out of memory): report it and start a fresh module, the
        // old one's state is unknown.
        line = { job: i, error: `${jobs[i].model}: the TFLite interpreter crashed: ${e && e.message ? e.message : e}` +
                                lastMessages() };
        module = await loadInterpreter();
      }
    }
    process.stdout.write(JSON.stringify(line) + '\n');
  }
}

main().catch((e) => {
  process.stderr.write(`tflite-oracle: ${e instanceof OracleError ? e.message : (e && e.stack ? e.stack : String(e))}\n`);
  process.exit(e instanceof OracleError ? e.code : 1);
});
