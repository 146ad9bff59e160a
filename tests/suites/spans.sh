# Application spans (the app set, libmagnet's span calls): app.span in
# the catalog and added as a set; magnet-spans' root span and its steps
# captured by magnet-read -P app: one trace, each step the root's child,
# events in their steps, ends matching begins, the attributes and the
# traceparents the program printed; a traceparent adopted as the root's
# remote parent, a malformed one refused; the spans written as OTLP and
# Zipkin JSON, the kernel's packets children of the steps that sent them;
# malformed writes to the device refused, each with its errno, and none of
# them logged.
# rig-programs: jq
. /magnet/lib.sh

unload_all
load_magnet
check "the loopback device up" $IP link set lo up

magnetctl probe catalog > /tmp/sp-catalog.txt
check "the catalog has app.span" grep -q "^app.span " /tmp/sp-catalog.txt
magnetctl probe sets > /tmp/sp-sets.txt
check "probe sets lists app's layer span, on the span device" \
	sh -c 'grep -E "^app +span " /tmp/sp-sets.txt | grep -q /dev/magnet-span'
check "magnetctl probe add-set app" magnetctl probe add-set app
check "... a probe of kind user" sh -c 'magnetctl probe list | grep "app\.span" | grep -q user'
check "magnetctl probe del-set app" magnetctl probe del-set app
check "the span device is there for anyone to write" \
	sh -c '[ "$(stat -c %a /dev/magnet-span)" = 666 ]'
check "spans without a probe: the program runs the same" \
	sh -c 'magnet-spans -n 2 > /tmp/sp-none.txt && [ $(wc -l < /tmp/sp-none.txt) -eq 3 ]'

# capture NAME CMD...: CMD while magnet-read -P app writes JSON lines to
# /tmp/NAME.json and a trace file /tmp/NAME.mtr; CMD's output in
# /tmp/NAME.out, its pid in /tmp/NAME.pid
capture() {
	cap=$1
	shift
	magnet-read -P app -j --print --trace /tmp/$cap.mtr > /tmp/$cap.json 2> /tmp/$cap.err &
	mr=$!
	wait_for 30 sh -c 'magnetctl probe list | grep -q "app\.span"'
	sh -c "echo \$\$ > /tmp/$cap.pid; exec $*" > /tmp/$cap.out
	sleep 0.5
	interrupt $mr
	wait $mr
	cat /tmp/$cap.err
	grep '"type":"span"' /tmp/$cap.json > /tmp/$cap.spans
	head -n 2 /tmp/$cap.spans | sed 's/^/# /'
}

capture three magnet-spans -n 3 -u 9999 -f /tmp/sp-file
pid=$(cat /tmp/three.pid)
n=$(wc -l < /tmp/three.spans)
check "11 span records: the root's begin and end, three steps' begin, event and end ($n)" \
	[ "$n" -eq 11 ]
q() { jq -r "$1" /tmp/three.spans | tr '\n' ' '; }
check "every record from the program's thread ($pid)" \
	sh -c "[ \"\$(jq -r '.tid' /tmp/three.spans | sort -u)\" = $pid ]"
check "one trace" sh -c "[ \$(jq -r .trace_id /tmp/three.spans | sort -u | wc -l) -eq 1 ]"
root=$(jq -r 'select(.span_type == "begin" and .name == "request") | .span_id' /tmp/three.spans)
trace=$(jq -r .trace_id /tmp/three.spans | head -n 1)
check "the root span: a begin without a parent, with its attribute" \
	sh -c "[ \$(jq -c 'select(.span_type == \"begin\" and .name == \"request\" and .parent_id == null and .attributes[\"service.name\"] == \"magnet-spans\")' /tmp/three.spans | wc -l) -eq 1 ]"
check "three steps, each the root's child, numbered 0, 1, 2" \
	sh -c "[ \"\$(jq -r 'select(.span_type == \"begin\" and .name == \"step\") | .parent_id + \" \" + .attributes[\"step.number\"]' /tmp/three.spans | tr '\n' ';')\" = '$root 0;$root 1;$root 2;' ]"
check "each step's event 'done' in its step, between its begin and end" \
	sh -c "[ \"\$(jq -r 'select(.name == \"step\" or .name == \"done\" or (.span_type == \"end\" and .span_id != \"$root\")) | .span_type + \" \" + .span_id' /tmp/three.spans |
		awk '{ t[NR] = \$1; s[NR] = \$2 } END { for (i = 1; i <= NR; i += 3) if (t[i] != \"begin\" || t[i+1] != \"event\" || t[i+2] != \"end\" || s[i] != s[i+1] || s[i] != s[i+2]) { print \"bad\"; exit } print \"good\" }')\" = good ]"
check "the root ends last" sh -c "[ \"\$(tail -n 1 /tmp/three.spans | jq -r '.span_type + \" \" + .span_id')\" = 'end $root' ]"
check "records in time order" sh -c "jq -s '[.[].ts | tonumber] as \$t | \$t == (\$t | sort)' /tmp/three.spans | grep -q true"
check "the traceparents printed are the spans': the root's, then each step's" \
	sh -c "[ \"\$(cat /tmp/three.out | tr '\n' ' ')\" = \"\$(jq -r 'select(.span_type == \"begin\") | \"00-\" + .trace_id + \"-\" + .span_id + \"-01\"' /tmp/three.spans | tr '\n' ' ')\" ]"
magnet-read -r /tmp/three.mtr > /tmp/three.txt 2> /dev/null
sed -n '1,3p' /tmp/three.txt | sed 's/^/# /'
check "text, from the trace file: a SPAN line per record" \
	sh -c "[ \$(grep -c ' SPAN ' /tmp/three.txt) -eq 11 ]"
check "... the root's begin with its name, ids, thread and attribute" \
	grep -q " SPAN begin request trace $trace span $root by $pid/$pid request.kind=example service.name=magnet-spans\$" /tmp/three.txt
check "... a step's with its parent" \
	grep -q " SPAN begin step trace $trace span [0-9a-f]\{16\} parent $root by $pid/$pid step.number=0\$" /tmp/three.txt

# a request's context: the root joins its trace, a remote child
TP=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
capture adopt magnet-spans -n 0 -p $TP
check "with -p TRACEPARENT the root is in that trace, the remote child of its span" \
	sh -c "[ \$(jq -c 'select(.span_type == \"begin\" and .trace_id == \"4bf92f3577b34da6a3ce929d0e0e4736\" and .parent_id == \"00f067aa0ba902b7\" and .remote)' /tmp/adopt.spans | wc -l) -eq 1 ]"
for bad in 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7 \
	   00-00000000000000000000000000000000-00f067aa0ba902b7-01 \
	   00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01 \
	   00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01 \
	   ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 \
	   00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x; do
	check "a malformed traceparent refused: $bad" \
		sh -c "! magnet-spans -n 0 -p $bad > /dev/null 2> /tmp/tp.err && grep -q 'not a W3C traceparent' /tmp/tp.err"
done

# The spans as a tracing system reads them (magnet-read --otlp, --zipkin):
# each step's datagram (udp-send's journey, in the step's system call) a
# child of its step, the service the library named; the files are
# checked on the host too (spans.host: OpenTelemetry's .proto files,
# Zipkin's schema).
magnet-read -P app,udp-send --otlp /tmp/otlp.json --zipkin /tmp/zipkin.json 2> /tmp/otlp.err &
mr=$!
wait_for 30 sh -c 'magnetctl probe list | grep -q "app\.span"'
snaps() {	# the snap lengths of udp-send's probes
	magnetctl -j probe list | sed 's/{"id":/\n&/g' | grep '"name":"udp-send\.' |
		sed -n 's/.*"snaplen":\([0-9]*\).*/\1/p' | sort -u | tr '\n' ' '
}
check "--otlp and --zipkin alone: the probes keep 1024 bytes of a packet ($(snaps))" \
	[ "$(snaps)" = "1024 " ]
magnet-spans -n 3 -u 9999 > /tmp/otlp.out
sleep 0.5
interrupt $mr
wait $mr
cat /tmp/otlp.err
# (flat: one line per span: name, service, trace, id, parent, thread)
jq -c '.resourceSpans[] | ([.resource.attributes[] | {(.key): (.value | to_entries[0].value)}] | add) as $r
	| .scopeSpans[].spans[] | [.name, $r["service.name"], .traceId, .spanId, (.parentSpanId // ""), $r["host.name"]]' \
	/tmp/otlp.json > /tmp/otlp.flat
head -n 3 /tmp/otlp.flat | sed 's/^/# /'
check "--otlp: the root and its three steps, of magnet-spans' service (named by libmagnet)" \
	sh -c "[ \"\$(jq -r 'select(.[1] == \"magnet-spans\" and (.[0] == \"request\" or .[0] == \"step\")) | .[0]' /tmp/otlp.flat | sort | uniq -c | tr -s ' ' | tr '\n' ';')\" = ' 1 request; 3 step;' ]"
steps=$(jq -r 'select(.[0] == "step") | .[3]' /tmp/otlp.flat | sort | tr '\n' ' ')
check "--otlp: each step's datagram a child of its step, in its trace, on this host" \
	sh -c "[ \"\$(jq -r 'select(.[0] == \"udp send\") | .[4]' /tmp/otlp.flat | sort | tr '\n' ' ')\" = '$steps' ] &&
		[ \$(jq -r '.[2]' /tmp/otlp.flat | sort -u | wc -l) -eq 1 ] &&
		[ \"\$(jq -r '.[5]' /tmp/otlp.flat | sort -u)\" = \"\$(hostname)\" ]"
check "--otlp: the datagrams' layers their children" \
	sh -c "jq -r 'select(.[0] == \"udp send\") | .[3]' /tmp/otlp.flat | while read -r u; do
		jq -r \"select(.[4] == \\\"\$u\\\") | .[0]\" /tmp/otlp.flat | grep -qx dev-xmit || exit 1; done"
check "--zipkin: the same spans" \
	sh -c "[ \"\$(jq -r '.[].id' /tmp/zipkin.json | sort)\" = \"\$(jq -r '.[3]' /tmp/otlp.flat | sort)\" ]"
artifact /tmp/otlp.json
artifact /tmp/zipkin.json
# live, a line comes while the capture goes on (not only at its end)
magnet-read -P app --otlp /tmp/live.json 2> /tmp/live.err &
mr=$!
wait_for 30 sh -c 'magnetctl probe list | grep -q "app\.span"'
magnet-spans -n 1 > /dev/null
check "--otlp, live: the spans written while the capture goes on" \
	wait_for 10 sh -c "grep -q '\"name\":\"request\"' /tmp/live.json"
interrupt $mr
wait $mr

# an expression: its rule on the packets' probes in the kernel (not on
# app.span, which sees no packet), the application's spans kept
[ -d /sys/module/magnet_packet ] || insmod $M/magnet_packet.ko
magnet-read -P app,udp-send --otlp /tmp/expr.json 'udp port 9998' 2> /tmp/expr.err &
mr=$!
wait_for 30 session_probe_enabled app.span
magnet-spans -n 3 -u 9999 > /dev/null
sleep 0.5
interrupt $mr
wait $mr
sed 's/^/# /' /tmp/expr.err
check "an expression with the app set: filtered in the kernel" \
	sh -c "! grep -q 'expression here only' /tmp/expr.err && grep -q '^magnet-read: [1-9][0-9]* records filtered in the kernel' /tmp/expr.err"
check "... the application's spans kept, the datagrams it rejects not there" \
	sh -c "grep -q '\"name\":\"step\"' /tmp/expr.json && ! grep -q '\"name\":\"udp send\"' /tmp/expr.json"

# malformed writes: each refused with its errno, and none logged
capture writes magnet-test span-writes
sed 's/^/# /' /tmp/writes.out
check "every malformed write refused with its errno, the good ones taken" \
	sh -c "! grep -q '^not ok' /tmp/writes.out && [ \$(grep -c '^ok' /tmp/writes.out) -eq 20 ]"
check "... and only the two good ones logged" \
	sh -c "[ \$(wc -l < /tmp/writes.spans) -eq 2 ]"
summary
