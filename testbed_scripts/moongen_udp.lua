-- moongen_udp.lua: 64-byte UDP frames from N flows (source addresses 10.0.0.1 + i) at line rate, for the hXDP
-- testbed (the generator's port is cabled to nf0). Run: MoonGen moongen_udp.lua <txPort> [-f FLOWS] [-s SIZE]
local mg     = require "moongen"
local memory = require "memory"
local device = require "device"
local stats  = require "stats"

function configure(parser)
	parser:description("hXDP testbed: UDP flows at line rate")
	parser:argument("txDev", "Device to transmit from."):convert(tonumber)
	parser:option("-f --flows", "Number of flows (distinct source addresses)."):default(10):convert(tonumber)
	parser:option("-s --size", "Frame size without FCS."):default(60):convert(tonumber)
	parser:option("-r --rate", "Rate in Mbit/s (0: line rate)."):default(0):convert(tonumber)
	parser:option("-t --time", "Seconds to run (0: until ^C)."):default(0):convert(tonumber)
end

function master(args)
	local dev = device.config{port = args.txDev, txQueues = 1, rxQueues = 1}
	device.waitForLinks()
	if args.rate > 0 then dev:getTxQueue(0):setRate(args.rate) end
	if args.time > 0 then mg.setRuntime(args.time) end
	mg.startTask("loadSlave", dev:getTxQueue(0), args.size, args.flows)
	mg.waitForTasks()
end

function loadSlave(queue, size, flows)
	local mempool = memory.createMemPool(function(buf)
		buf:getUdpPacket():fill{
			ethSrc = queue, ethDst = "02:00:00:00:00:02",
			ip4Src = "10.0.0.1", ip4Dst = "10.1.0.1",
			udpSrc = 1234, udpDst = 5678,
			pktLength = size,
		}
	end)
	local bufs = mempool:bufArray()
	local txCtr = stats:newDevTxCounter(queue, "plain")
	local base = parseIPAddress("10.0.0.1")
	local i = 0
	while mg.running() do
		bufs:alloc(size)
		for _, buf in ipairs(bufs) do
			buf:getUdpPacket().ip4.src:set(base + (i % flows))
			i = i + 1
		end
		bufs:offloadUdpChecksums()
		queue:send(bufs)
		txCtr:update()
	end
	txCtr:finalize()
end
