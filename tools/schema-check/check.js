#!/usr/bin/env node
// Checks gpuplan's emitted files against the schemas of the tools that read them.
//
//   node check.js k8s FILE...   Kubernetes manifests (multi-document YAML): every document is
//                               validated with the API schema compiled into kubernetes-models
//                               (core, apps, batch, autoscaling) or @kubernetes-models/keda
//                               (ScaledObject), then walked strictly: a field the schema does not
//                               define is an error (the validators alone accept unknown fields).
//                               Kubeflow PyTorchJob (kubeflow.org/v1): ajv on the CRD's schema
//                               (tests/emit/fixtures/pytorchjob_v1_schema.json, strict).
//   node check.js sky FILE...   SkyPilot task YAML against the JSON schema extracted from
//                               SkyPilot's sky/utils/schemas.py (tests/emit/fixtures), with ajv.
//
// Exit 0 when every file passes, 1 with one line per problem otherwise, 2 on usage errors.
// Offline: everything comes from node_modules installed by `npm ci` (tools/setup.sh).
'use strict';
const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');

function fail(msg) {
  process.stderr.write(msg + '\n');
  process.exit(2);
}

// The compiled validate function for an apiVersion/kind, from the model module's own require.
function schemaValidator(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  let modelFile;
  if (group === 'keda.sh') {
    modelFile = require.resolve(`@kubernetes-models/keda/keda.sh/${version}/${kind}`);
  } else {
    const dir = group === '' ? version : `${group}/${version}`;
    modelFile = require.resolve(`kubernetes-models/${dir}/${kind}`);
  }
  const src = fs.readFileSync(modelFile, 'utf8');
  const m = src.match(/require\("(\.\.\/[^"]*_schemas\/[A-Za-z0-9]+\.js)"\)/);
  if (!m) throw new Error(`no schema module in ${modelFile}`);
  return require(path.resolve(path.dirname(modelFile), m[1])).validate;
}

// Wraps `data` so that every property the validator reads is recorded per JSON path; objects
// whose keys the validator enumerates (maps: labels, resources, data) count as fully known.
function recordingProxy(data, pointer, seen) {
  if (data === null || typeof data !== 'object') return data;
  const entry = { read: new Set(), enumerated: false, obj: data };
  seen.set(pointer, entry);
  return new Proxy(data, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string') return v;
      entry.read.add(prop);
      if (Object.prototype.hasOwnProperty.call(target, prop) && v !== null && typeof v === 'object') {
        const child = pointer + '/' + prop;
        if (!seen.has(child) || seen.get(child).obj !== v) return recordingProxy(v, child, seen);
        return seen.get(child).proxy || recordingProxy(v, child, seen);
      }
      return v;
    },
    ownKeys(target) {
      entry.enumerated = true;
      return Reflect.ownKeys(target);
    },
  });
}

function unknownFields(seen) {
  const out = [];
  for (const [pointer, e] of seen) {
    if (Array.isArray(e.obj) || e.enumerated) continue;
    for (const key of Object.keys(e.obj)) {
      if (!e.read.has(key)) out.push(`${pointer || '/'}: unknown field "${key}"`);
    }
  }
  return out;
}

const crdFixtures = {
  'kubeflow.org/v1 PyTorchJob': path.resolve(__dirname, '../../tests/emit/fixtures/pytorchjob_v1_schema.json'),
};

function crdValidator(apiVersion, kind) {
  const f = crdFixtures[`${apiVersion} ${kind}`];
  if (!f) return null;
  const Ajv = require('ajv');
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  return ajv.compile(JSON.parse(fs.readFileSync(f, 'utf8')));
}

function checkK8s(file) {
  const problems = [];
  const docs = yaml.loadAll(fs.readFileSync(file, 'utf8')).filter((d) => d !== null && d !== undefined);
  if (docs.length === 0) problems.push(`${file}: no documents`);
  docs.forEach((doc, i) => {
    const where = `${file}: document ${i + 1} (${doc.kind || '?'})`;
    if (typeof doc.apiVersion !== 'string' || typeof doc.kind !== 'string') {
      problems.push(`${where}: apiVersion and kind are required`);
      return;
    }
    const crd = crdValidator(doc.apiVersion, doc.kind);
    if (crd) {
      if (!crd(doc)) {
        for (const err of crd.errors) {
          problems.push(`${where}: ${err.instancePath || '/'} ${err.message} ${JSON.stringify(err.params)}`);
        }
      }
      return;
    }
    let validate;
    try {
      validate = schemaValidator(doc.apiVersion, doc.kind);
    } catch (e) {
      problems.push(`${where}: no schema for ${doc.apiVersion} ${doc.kind}`);
      return;
    }
    const seen = new Map();
    const ok = validate(recordingProxy(doc, '', seen));
    if (!ok) {
      for (const err of validate.errors || []) {
        problems.push(`${where}: ${err.instancePath || '/'} ${err.message || err.keyword} ${JSON.stringify(err.params)}`);
      }
      return;
    }
    for (const u of unknownFields(seen)) problems.push(`${where}: ${u}`);
  });
  return problems;
}

function checkSky(file, schemaFile) {
  const Ajv = require('ajv');
  const schema = JSON.parse(fs.readFileSync(schemaFile, 'utf8'));
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(schema);
  const docs = yaml.loadAll(fs.readFileSync(file, 'utf8')).filter((d) => d !== null && d !== undefined);
  const problems = [];
  if (docs.length !== 1) problems.push(`${file}: expected one task document, got ${docs.length}`);
  for (const doc of docs) {
    if (!validate(doc)) {
      for (const err of validate.errors) {
        problems.push(`${file}: ${err.instancePath || '/'} ${err.message} ${JSON.stringify(err.params)}`);
      }
    }
  }
  return problems;
}

function main() {
  const args = process.argv.slice(2);
  const mode = args.shift();
  let schemaFile = path.resolve(__dirname, '../../tests/emit/fixtures/skypilot_task_schema.json');
  const files = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--schema') schemaFile = args[++i];
    else files.push(args[i]);
  }
  if (!['k8s', 'sky'].includes(mode) || files.length === 0) fail('usage: check.js k8s|sky [--schema FILE] FILE...');
  let problems = [];
  for (const f of files) problems = problems.concat(mode === 'k8s' ? checkK8s(f) : checkSky(f, schemaFile));
  for (const p of problems) process.stdout.write(p + '\n');
  process.stdout.write(`${files.length} file(s) checked, ${problems.length} problem(s)\n`);
  process.exit(problems.length ? 1 : 0);
}

main();
