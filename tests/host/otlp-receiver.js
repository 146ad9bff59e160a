// SPDX-License-Identifier: GPL-2.0
//
// A small OTLP/HTTP receiver for the tests: POST /v1/traces with an
// ExportTraceServiceRequest in OTLP's JSON encoding, each decoded with
// OpenTelemetry's own .proto files (otlp-proto.js) as it comes; what a
// collector would do with it aside. No OpenTelemetry Collector is
// packaged for Debian 12.
//
// Usage: node tests/host/otlp-receiver.js PORT PROTO_DIR MODE_FILE LOG
//
// Listens on 127.0.0.1:PORT (QEMU's user network brings the VMs' 10.0.2.2
// there), taking POSTs to any path ending in /v1/traces (a collector
// behind a prefix), 404 for others. Each request reads MODE_FILE (a word;
// missing or empty: ok):
//   ok      decode it: 200 and {} (an ExportTraceServiceResponse) if it
//           decodes, 400 and why if not; 415 if it is not JSON
//   fail    500, as a collector that fails
//   hang    no answer (the connection held until the client gives up)
//   reject  400, as a collector that refuses the request
// and appends a line to LOG: {"mode", "status", "path", and for a request taken
// "spans", "resources", "hosts" {host.name: spans}, "services"; for one
// refused "error"}.
'use strict';
const fs = require('fs');
const http = require('http');
const { load, decodeRequest } = require('./otlp-proto.js');

const [port, protoDir, modeFile, logFile] = process.argv.slice(2);
if (!port || !protoDir || !modeFile || !logFile) {
	console.error('usage: otlp-receiver.js PORT PROTO_DIR MODE_FILE LOG');
	process.exit(2);
}
const Request = load(protoDir);
const BODY_MAX = 16 << 20;

function mode() {
	try {
		return fs.readFileSync(modeFile, 'utf8').trim() || 'ok';
	} catch (e) {
		return 'ok';
	}
}

function log(entry) {
	fs.appendFileSync(logFile, JSON.stringify(entry) + '\n');
}

const server = http.createServer((req, res) => {
	const chunks = [];
	let size = 0;
	req.on('data', c => {
		size += c.length;
		if (size <= BODY_MAX)
			chunks.push(c);
	});
	req.on('end', () => {
		const m = mode();
		const answer = (status, body, entry) => {
			log(Object.assign({ mode: m, status, path: req.url }, entry || {}));
			res.writeHead(status, { 'Content-Type': 'application/json' });
			res.end(body);
		};
		if (req.method !== 'POST' || !/^\/([^?#]*\/)?v1\/traces$/.test(req.url))
			return answer(404, '{}', { error: `${req.method} ${req.url}` });
		if (m === 'hang') {
			log({ mode: m, status: 0, path: req.url });
			return;		/* (held until the client gives up) */
		}
		if (m === 'fail')
			return answer(500, '{}');
		if (m === 'reject')
			return answer(400, '{}');
		if (size > BODY_MAX)
			return answer(413, '{}', { error: `${size} bytes` });
		if (!/^application\/json/.test(req.headers['content-type'] || ''))
			return answer(415, '{}', { error: req.headers['content-type'] || 'none' });
		try {
			const r = decodeRequest(Request, JSON.parse(Buffer.concat(chunks).toString('utf8')));
			answer(200, '{}', { spans: r.spans, resources: r.resources,
					    hosts: r.hosts, services: r.services });
		} catch (e) {
			answer(400, JSON.stringify({ message: e.message }), { error: e.message });
		}
	});
});
server.keepAliveTimeout = 5000;
server.listen(Number(port), '127.0.0.1');
