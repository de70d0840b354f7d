-- moongen_4port.lua: UDP from N flows on four ports at once (each cabled to one NetFPGA port, nf0..nf3), counting
-- what comes back on each port and sampling latency with hardware timestamps (PTP frames on the first port).
-- The paper's 52 Mpps needed four 10G ports: one port carries at most 14.88 Mpps of 64-byte frames.
--
--   MoonGen moongen_4port.lua DEV0 DEV1 DEV2 DEV3 [--mpps R] [--time S] [--size B] [--flows N] [--hist FILE]
--
-- --mpps is the total offered rate split evenly over the ports (0: line rate); --time the seconds to send.
-- Prints at the end one line per port, `port N tx PKTS rx PKTS`, and `latency_ns p50 P50 p99 P99 samples K`
-- (testbed_scripts/rfc2544.py reads these). Untested here: written for MoonGen's documented API.
local mg      = require "moongen"
local memory  = require "memory"
local device  = require "device"
local stats   = require "stats"
local timer   = require "timer"
local ts      = require "timestamping"
local hist    = require "histogram"

function configure(parser)
	parser:description("hXDP testbed: four ports of UDP traffic, receive counters and latency")
	parser:argument("dev", "The four devices, in the order of nf0..nf3."):args(4):convert(tonumber)
	parser:option("--mpps", "Total offered rate in Mpps over the four ports (0: line rate)."):default(0):convert(tonumber)
	parser:option("--time", "Seconds to send."):default(10):convert(tonumber)
	parser:option("--size", "Frame size without FCS."):default(60):convert(tonumber)
	parser:option("--flows", "Flows per port (distinct source addresses)."):default(10):convert(tonumber)
	parser:option("--hist", "Write the latency histogram (CSV) here."):default("")
end

function master(args)
	local devs = {}
	for i, port in ipairs(args.dev) do
		-- queue 0 carries the load; queue 1 of the first port the timestamped probes
		devs[i] = device.config{port = port, txQueues = 2, rxQueues = 2}
	end
	device.waitForLinks()
	local perPort = args.mpps / #devs
	local counters = {}
	for i, dev in ipairs(devs) do
		local q = dev:getTxQueue(0)
		if perPort > 0 then
			-- setRate takes Mbit/s of frames on the wire: size + FCS, preamble and gap are 24 bytes more
			q:setRate(perPort * (args.size + 24) * 8)
		end
		counters[i] = {tx = stats:newDevTxCounter(dev, "nil"), rx = stats:newDevRxCounter(dev, "nil")}
		mg.startTask("loadSlave", q, i - 1, args.size, args.flows)
	end
	mg.startTask("latencySlave", devs[1]:getTxQueue(1), devs[1]:getRxQueue(1), args.size, args.hist)
	mg.setRuntime(args.time)
	mg.waitForTasks()
	for i, c in ipairs(counters) do
		-- device counters read the NIC's registers: one update at the end holds every packet
		c.tx:update(); c.rx:update()
		c.tx:finalize(); c.rx:finalize()
		print(("port %d tx %d rx %d"):format(i - 1, c.tx.total, c.rx.total))
	end
end

function loadSlave(queue, port, size, flows)
	local mempool = memory.createMemPool(function(buf)
		buf:getUdpPacket():fill{
			ethSrc = queue, ethDst = "02:00:00:00:00:02",
			ip4Src = "10.0.0.1", ip4Dst = "10.1.0.1",
			udpSrc = 1234, udpDst = 5678,
			pktLength = size,
		}
	end)
	local bufs = mempool:bufArray()
	local base = parseIPAddress("10.0.0.1") + port * 256
	local i = 0
	while mg.running() do
		bufs:alloc(size)
		for _, buf in ipairs(bufs) do
			buf:getUdpPacket().ip4.src:set(base + (i % flows))
			i = i + 1
		end
		bufs:offloadUdpChecksums()
		queue:send(bufs)
	end
end

function latencySlave(txQueue, rxQueue, size, histFile)
	local stamper = ts:newUdpTimestamper(txQueue, rxQueue)
	local h = hist:new()
	local pause = timer:new(0.001)
	while mg.running() do
		h:update(stamper:measureLatency(size))
		pause:wait()
		pause:reset()
	end
	if histFile ~= "" then h:save(histFile) end
	print(("latency_ns p50 %d p99 %d samples %d"):format(h:percentile(50) or 0, h:percentile(99) or 0,
		h.numSamples or 0))
end
