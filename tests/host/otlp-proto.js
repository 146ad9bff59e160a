// SPDX-License-Identifier: GPL-2.0
//
// OTLP/JSON decoded with OpenTelemetry's own protobuf definitions, for the
// host tests' decoder (otlp-decode.js) and receiver (otlp-receiver.js).
//
// decodeRequest(json) walks an ExportTraceServiceRequest against the
// message types the .proto files define, with OTLP's JSON rules (its
// deviation from proto3's JSON mapping: trace and span ids as hex, not
// base64; enums as integers): a field the type does not have, a value of
// the wrong type, an id of the wrong length or two fields of one oneof
// throw. The message is then encoded to protobuf and decoded back, and
// must come back whole. It returns {resources, spans, hosts, services,
// traceIds}.
'use strict';
const path = require('path');
const protobuf = require(path.join(__dirname, '../../build/viewer/node_modules/protobufjs'));

function load(protoDir) {
	const root = new protobuf.Root();
	root.resolvePath = (origin, target) => path.join(protoDir, path.basename(target));
	root.loadSync('trace_service.proto');
	root.resolveAll();
	return root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
}

const ID_BYTES = { traceId: 16, spanId: 8, parentSpanId: 8 };
const INT64 = ['int64', 'uint64', 'fixed64', 'sint64', 'sfixed64'];
const INT32 = ['int32', 'uint32', 'fixed32', 'sint32', 'sfixed32'];

function fail(where, why) {
	throw new Error(`${where}: ${why}`);
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


function decodeRequest(Request, json) {
	const plain = walk(Request, json, 'request');
	const msg = Request.fromObject(plain);
	const err = Request.verify(msg);
	if (err)
		fail('request', err);
	const opts = { longs: String, enums: Number, bytes: String };
	const back = Request.toObject(Request.decode(Request.encode(msg).finish()), opts);
	if (JSON.stringify(back) !== JSON.stringify(Request.toObject(msg, opts)))
		fail('request', 'not the same after encoding and decoding');
	const out = { resources: 0, spans: 0, hosts: {}, services: {}, traceIds: [] };
	for (const rs of json.resourceSpans || []) {
		out.resources++;
		const attr = {};
		for (const a of (rs.resource && rs.resource.attributes) || [])
			attr[a.key] = a.value.stringValue;
		let n = 0;
		for (const ss of rs.scopeSpans || [])
			for (const s of ss.spans || []) {
				n++;
				out.traceIds.push(s.traceId);
			}
		out.spans += n;
		const h = attr['host.name'] || '', sv = attr['service.name'] || '';
		out.hosts[h] = (out.hosts[h] || 0) + n;
		out.services[sv] = (out.services[sv] || 0) + n;
	}
	return out;
}

module.exports = { load, decodeRequest };
