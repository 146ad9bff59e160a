-- SPDX-License-Identifier: GPL-2.0
--
-- magnet.lua: a Wireshark post-dissector for magnet-read's pcapng files.
--
-- magnet-read -w writes each packet's journey through the network stack
-- as the packet's comment, one line per layer it passed:
--
--   LAYER SECONDS.NANOSECONDS +MICROSECONDS us cpu CPU [CONTEXT] TGID/TID [DEV]
--
-- (see tools/magnet-read/pcapng.c). This turns that comment into fields
-- that display filters, columns and statistics can use:
--
--   magnet.layers     the layers, in order: "socket,udp,ip,dev-queue,..."
--   magnet.nlayers    how many
--   magnet.total_us   microseconds from the first layer to the last
--   magnet.hop        one per layer, with:
--     magnet.hop.layer   its name
--     magnet.hop.us      microseconds since the layer before (0 for the first)
--     magnet.hop.time    its time (Unix seconds)
--     magnet.hop.cpu     the CPU it ran on
--     magnet.hop.context softirq, hardirq or nmi, when it ran in one
--     magnet.hop.tgid, magnet.hop.tid   the process and thread
--     magnet.hop.dev     the device, at the layers that have one
--
-- e.g. tshark -r capture.pcapng -Y 'magnet.total_us > 1000'
--      tshark -r capture.pcapng -Y 'magnet.hop.layer == "dev-xmit" && magnet.hop.us > 50'
--
-- Installed in Wireshark's global Lua plugin folder (tshark -G folders:
-- "Global Lua Plugins"), where Wireshark and tshark load it at start.
-- Packets without such a comment are left alone.

local magnet = Proto("magnet", "magnet packet journey")

local f = {
	layers = ProtoField.string("magnet.layers", "Layers"),
	nlayers = ProtoField.uint32("magnet.nlayers", "Number of layers"),
	total_us = ProtoField.double("magnet.total_us", "Total (microseconds)"),
	hop = ProtoField.string("magnet.hop", "Layer"),
	hop_layer = ProtoField.string("magnet.hop.layer", "Layer name"),
	hop_us = ProtoField.double("magnet.hop.us", "Since the layer before (microseconds)"),
	hop_time = ProtoField.string("magnet.hop.time", "Time (Unix seconds)"),
	hop_cpu = ProtoField.uint32("magnet.hop.cpu", "CPU"),
	hop_context = ProtoField.string("magnet.hop.context", "Context"),
	hop_tgid = ProtoField.uint32("magnet.hop.tgid", "Process (TGID)"),
	hop_tid = ProtoField.uint32("magnet.hop.tid", "Thread (TID)"),
	hop_dev = ProtoField.string("magnet.hop.dev", "Device"),
}
magnet.fields = { f.layers, f.nlayers, f.total_us, f.hop, f.hop_layer,
	f.hop_us, f.hop_time, f.hop_cpu, f.hop_context, f.hop_tgid, f.hop_tid,
	f.hop_dev }

local comment_field = Field.new("frame.comment")

-- One line of the comment as a table, or nil if it is not one of magnet's.
local function parse_line(line)
	local layer, time, us, cpu, rest =
		line:match("^(%S+)%s+(%d+%.%d+)%s+%+([%d%.]+) us cpu (%d+)%s+(.*)$")
	if not layer then
		return nil
	end
	local hop = { layer = layer, time = time, us = tonumber(us),
		cpu = tonumber(cpu) }
	local ctx, tgid, tid, dev = rest:match("^(%a+) (%d+)/(%d+)%s*(%S*)$")
	if not ctx then
		tgid, tid, dev = rest:match("^(%d+)/(%d+)%s*(%S*)$")
	end
	if not tgid then
		return nil
	end
	hop.context = ctx
	hop.tgid = tonumber(tgid)
	hop.tid = tonumber(tid)
	if dev ~= "" then
		hop.dev = dev
	end
	return hop
end

local function parse(text)
	local hops = {}
	for line in text:gmatch("[^\n]+") do
		local hop = parse_line(line)
		if not hop then
			return nil
		end
		hops[#hops + 1] = hop
	end
	if #hops == 0 then
		return nil
	end
	return hops
end

function magnet.dissector(tvb, pinfo, tree)
	local hops
	for _, c in ipairs({ comment_field() }) do
		hops = parse(tostring(c.value))
		if hops then
			break
		end
	end
	if not hops then
		return
	end
	local names = {}
	for i, h in ipairs(hops) do
		names[i] = h.layer
	end
	-- from the times, in whole nanoseconds (a double holds no more
	-- than 2^53: seconds and nanoseconds apart)
	local s1, n1 = hops[1].time:match("^(%d+)%.(%d+)$")
	local s2, n2 = hops[#hops].time:match("^(%d+)%.(%d+)$")
	local total = ((tonumber(s2) - tonumber(s1)) * 1e9 +
		tonumber(n2) - tonumber(n1)) / 1000
	local t = tree:add(magnet, string.format("magnet journey: %d layers, %.3f us",
		#hops, total))
	t:add(f.layers, table.concat(names, ","))
	t:add(f.nlayers, #hops)
	t:add(f.total_us, total)
	for _, h in ipairs(hops) do
		local label = string.format("%s +%.3f us, cpu %d%s, %d/%d%s",
			h.layer, h.us, h.cpu, h.context and (" " .. h.context) or "",
			h.tgid, h.tid, h.dev and (", " .. h.dev) or "")
		local ht = t:add(f.hop, label)
		ht:add(f.hop_layer, h.layer)
		ht:add(f.hop_us, h.us)
		ht:add(f.hop_time, h.time)
		ht:add(f.hop_cpu, h.cpu)
		if h.context then
			ht:add(f.hop_context, h.context)
		end
		ht:add(f.hop_tgid, h.tgid)
		ht:add(f.hop_tid, h.tid)
		if h.dev then
			ht:add(f.hop_dev, h.dev)
		end
	end
end

register_postdissector(magnet)
