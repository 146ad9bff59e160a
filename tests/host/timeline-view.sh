#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# magnet-read --perfetto's timeline in a real viewer, in a real browser:
# speedscope (an offline viewer of Chrome's trace-event JSON, from npm:
# tests/viewer/, installed by scripts/install-deps into build/viewer)
# served on the loopback and opened by Debian's Chromium, headless. The
# viewer lists each track with the time its slices cover: each must be
# what the file's slices on that track add up to, which holds only if the
# viewer read every slice where the file puts it (slices it nested wrongly
# would cover more). A screenshot is kept: build/artifacts/timeline.png.
# Perfetto's own UI (ui.perfetto.dev) cannot be had offline: not tested.
#
# Usage: tests/host/timeline-view.sh [MAGNET_READ]
# Prints "ok - ..." / "not ok - ..." lines, then "N passed, M failed".

top=$(cd "$(dirname "$0")/../.." && pwd)
MR=${1:-$top/build/bin/magnet-read}
VIEWER=$top/build/viewer/node_modules/speedscope/dist/release
T=$(mktemp -d)
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; }
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

browser=$(command -v chromium || command -v chromium-browser)
if [ -z "$browser" ] || [ ! -e "$VIEWER/index.html" ]; then
	not_ok "a browser and the viewer: chromium '$browser', speedscope in $VIEWER (scripts/install-deps installs both)"
	echo "$passed passed, $failed failed"
	exit 1
fi
mkdir "$T/site"
cp -r "$VIEWER"/. "$T/site/"
"$MR" -r "$top/tests/host/data/udp-veth.mtr" --perfetto "$T/site/timeline.json" 2> /dev/null
# a free port on the loopback, and a server on it
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$T/site" && exec python3 -m http.server "$port" --bind 127.0.0.1) > "$T/http.log" 2>&1 &
server=$!
i=0
while [ $i -lt 50 ] && ! python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/index.html')" 2> /dev/null; do
	sleep 0.1
	i=$((i + 1))
done
url="http://127.0.0.1:$port/index.html#profileURL=http://127.0.0.1:$port/timeline.json"
chrome() {
	timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu \
		--user-data-dir="$T/profile" --virtual-time-budget=15000 \
		--window-size=1280,800 "$@" "$url" 2> "$T/chrome.err"
}
chrome --dump-dom > "$T/dom.html"
# what the viewer shows of each track: its name and the time it covers
python3 - "$T/dom.html" "$T/site/timeline.json" > "$T/tracks.txt" <<'PY'
import html, json, re, sys
text = re.sub(r"<[^>]*>", "\n", open(sys.argv[1]).read())
lines = [html.unescape(l).strip() for l in text.split("\n") if l.strip()]
shown = {}
for i, l in enumerate(lines):
    m = re.match(r".*, (CPU \d+(?: \(\d+\))?) \(tid \d+\)$", l)
    if m and i + 1 < len(lines):
        w = re.match(r"^([\d.]+)(ms|µs|s)$", lines[i + 1])
        if w:
            shown[m.group(1)] = float(w.group(1)) * {"s": 1e6, "ms": 1e3, "µs": 1}[w.group(2)]
ev = json.load(open(sys.argv[2]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] == "thread_name"}
want = {}
for e in ev:
    if e["ph"] == "X":
        want[names[e["tid"]]] = want.get(names[e["tid"]], 0) + e["dur"]
for n in sorted(want):
    got = shown.get(n)
    # the viewer rounds to 2 decimals of its unit: within 1 %
    good = got is not None and abs(got - want[n]) <= 0.01 * want[n] + 0.01
    print("%s %s %.2f %s" % ("ok" if good else "bad", n.replace(" ", "_"),
                             want[n], "none" if got is None else "%.2f" % got))
PY
n=$(grep -c . "$T/tracks.txt")
if [ "$n" -gt 1 ] && ! grep -q '^bad' "$T/tracks.txt"; then
	ok "Chromium's speedscope shows each of the $n tracks (CPUs) covering the time its slices add up to"
else
	not_ok "the viewer's tracks: $(tr '\n' ';' < "$T/tracks.txt") $(tail -2 "$T/chrome.err" | tr '\n' ' ')"
fi
mkdir -p "$top/build/artifacts"
chrome --screenshot="$top/build/artifacts/timeline.png"
if [ -s "$top/build/artifacts/timeline.png" ]; then
	ok "a screenshot of the timeline: build/artifacts/timeline.png"
else
	not_ok "no screenshot: $(tail -2 "$T/chrome.err" | tr '\n' ' ')"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
