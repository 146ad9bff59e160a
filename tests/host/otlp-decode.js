// SPDX-License-Identifier: GPL-2.0
//
// Decode OTLP/JSON with OpenTelemetry's own protobuf definitions: each
// line of FILE (OTLP's file format, JSON Lines) an
// ExportTraceServiceRequest, as OTLP/HTTP posts one.
//
// Usage: node tests/host/otlp-decode.js PROTO_DIR FILE
//   PROTO_DIR: trace_service.proto and what it imports (build/otlp-proto,
//   from scripts/install-deps); protobufjs from build/viewer.
//
// Each line is walked against the message types the .proto files define,
// with OTLP's JSON rules (its deviation from proto3's JSON mapping: trace
// and span ids as hex, not base64; enums as integers): a field the type
// does not have, a value of the wrong type, an id of the wrong length or
// two fields of one oneof fail it. The message is then encoded to protobuf
// and decoded back, and must come back whole. Prints one JSON summary:
// {"requests":N,"resources":N,"spans":N}; exits 1 (and says why) on the
// first fault.
'use strict';
const fs = require('fs');
const path = require('path');
const protobuf = require(path.join(__dirname, '../../build/viewer/node_modules/protobufjs'));

const [protoDir, file] = process.argv.slice(2);
if (!protoDir || !file) {
	console.error('usage: otlp-decode.js PROTO_DIR FILE');
	process.exit(2);
}
const root = new protobuf.Root();
root.resolvePath = (origin, target) => path.join(protoDir, path.basename(target));
root.loadSync('trace_service.proto');
root.resolveAll();
const Request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const ID_BYTES = { traceId: 16, spanId: 8, parentSpanId: 8 };
const INT64 = ['int64', 'uint64', 'fixed64', 'sint64', 'sfixed64'];
const INT32 = ['int32', 'uint32', 'fixed32', 'sint32', 'sfixed32'];

function fail(where, why) {
	console.error(`otlp-decode: ${file}:${where}: ${why}`);
	process.exit(1);
}

function value(f, v, where) {
	if (f.resolvedType instanceof protobuf.Type)
		return walk(f.resolvedType, v, where);
	if (f.resolvedType instanceof protobuf.Enum) {
		if (!Number.isInteger(v) || !(v in f.resolvedType.valuesById))
			fail(where, `not a value of ${f.resolvedType.name}: ${JSON.stringify(v)}`);
		return v;
	}
	if (f.type === 'bytes') {
		if (typeof v !== 'string' || !/^([0-9a-f]{2})*$/.test(v))
			fail(where, `not lower-case hex: ${JSON.stringify(v)}`);
		if (ID_BYTES[f.name] && v.length !== 2 * ID_BYTES[f.name])
			fail(where, `${v.length / 2} bytes, not ${ID_BYTES[f.name]}`);
		return Buffer.from(v, 'hex');
	}
	if (f.type === 'string') {
		if (typeof v !== 'string')
			fail(where, 'not a string');
		return v;
	}
	if (f.type === 'bool') {
		if (typeof v !== 'boolean')
			fail(where, 'not a boolean');
		return v;
	}
	if (INT64.includes(f.type)) {
		if (!(typeof v === 'string' && /^-?[0-9]+$/.test(v)) && !Number.isSafeInteger(v))
			fail(where, `not a 64-bit integer: ${JSON.stringify(v)}`);
		if (f.type.startsWith('u') || f.type === 'fixed64')
			if (String(v).startsWith('-'))
				fail(where, 'negative');
		return String(v);
	}
	if (INT32.includes(f.type)) {
		if (!Number.isInteger(v))
			fail(where, 'not an integer');
		return v;
	}
	if (f.type === 'double' || f.type === 'float') {
		if (typeof v !== 'number')
			fail(where, 'not a number');
		return v;
	}
	fail(where, `type ${f.type} not handled`);
}

function walk(type, obj, where) {
	if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
		fail(where, `not a ${type.name} object`);
	const out = {};
	for (const [k, v] of Object.entries(obj)) {
		const f = type.fields[k];
		if (!f)
			fail(`${where}.${k}`, `no such field in ${type.fullName}`);
		if (f.partOf && Object.keys(out).some(n => f.partOf.oneof.includes(n)))
			fail(`${where}.${k}`, `a second field of oneof ${f.partOf.name}`);
		if (f.repeated) {
			if (!Array.isArray(v))
				fail(`${where}.${k}`, 'not an array');
			out[k] = v.map((x, i) => value(f, x, `${where}.${k}[${i}]`));
		} else {
			out[k] = value(f, v, `${where}.${k}`);
		}
	}
	return out;
}

const lines = fs.readFileSync(file, 'utf8').split('\n').filter(l => l.length);
let resources = 0, spans = 0;
lines.forEach((line, i) => {
	let json;
	try {
		json = JSON.parse(line);
	} catch (e) {
		fail(i + 1, `not JSON: ${e.message}`);
	}
	const plain = walk(Request, json, `${i + 1}`);
	const msg = Request.fromObject(plain);
	const err = Request.verify(msg);
	if (err)
		fail(i + 1, err);
	const back = Request.toObject(Request.decode(Request.encode(msg).finish()),
				      { longs: String, enums: Number, bytes: String });
	const again = Request.toObject(msg, { longs: String, enums: Number, bytes: String });
	if (JSON.stringify(back) !== JSON.stringify(again))
		fail(i + 1, 'not the same after encoding and decoding');
	for (const rs of msg.resourceSpans) {
		resources++;
		for (const ss of rs.scopeSpans)
			spans += ss.spans.length;
	}
});
console.log(JSON.stringify({ requests: lines.length, resources, spans }));
