// SPDX-License-Identifier: GPL-2.0
//
// Decode OTLP/JSON with OpenTelemetry's own protobuf definitions: each
// line of FILE (OTLP's file format, JSON Lines) an
// ExportTraceServiceRequest, as OTLP/HTTP posts one (otlp-proto.js says
// how it is checked).
//
// Usage: node tests/host/otlp-decode.js PROTO_DIR FILE
//   PROTO_DIR: trace_service.proto and what it imports (build/otlp-proto,
//   from scripts/install-deps); protobufjs from build/viewer.
//
// Prints one JSON summary: {"requests":N,"resources":N,"spans":N}; exits 1
// (and says why) on the first fault.
'use strict';
const fs = require('fs');
const { load, decodeRequest } = require('./otlp-proto.js');

const [protoDir, file] = process.argv.slice(2);
if (!protoDir || !file) {
	console.error('usage: otlp-decode.js PROTO_DIR FILE');
	process.exit(2);
}
const Request = load(protoDir);
const lines = fs.readFileSync(file, 'utf8').split('\n').filter(l => l.length);
let resources = 0, spans = 0;
lines.forEach((line, i) => {
	try {
		const r = decodeRequest(Request, JSON.parse(line));
		resources += r.resources;
		spans += r.spans;
	} catch (e) {
		console.error(`otlp-decode: ${file}:${i + 1}: ${e.message}`);
		process.exit(1);
	}
});
console.log(JSON.stringify({ requests: lines.length, resources, spans }));
