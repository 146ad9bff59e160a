# Core: the record stream from every context on every CPU, through every
# I/O mode (the mapping included) and several watermark settings, in both
# full modes; exact accounting; the in-kernel reader; the read attributes;
# the mapping's rules; the reader's wake-up raced against writers.
. /magnet/lib.sh

unload_all
check "load magnet" load_magnet \
	buffers=default:256K,big:4M,small:16K,medium:64K,flight:16K:overwrite,flightbig:4M:overwrite
check "load magnet_stress" insmod $M/magnet_stress.ko

run_c magnet-test format

# Paced writers, big buffer (seconds of the stream per CPU): the reader
# keeps up, nothing may be lost.
paced="ms=1500 min=32 max=200 period_us=1000 burst=2 task_sleep_us=1000"
for wm in "none:" "count64:--count-wm 64" "size32k:--size-wm 32768" \
	  "mixed:--count-wm 16 --size-wm 4096 --timeout-us 20000"; do
	name=${wm%%:*}
	args=${wm#*:}
	for io in read poll epoll sigio uring map; do
		run_c magnet-test stream --name "no-loss/$name/$io" --io $io \
			--buffer big --run "buffer=big $paced" $args --expect-no-loss
	done
done
run_c magnet-test stream --name "no-loss/overwrite-mode" --io poll \
	--buffer flightbig --overwrite --run "buffer=flightbig $paced" --expect-no-loss

# Large records (up to 16 KiB), never full: "big" holds about a second of
# this stream per CPU, so a reader vCPU that a busy host deschedules for a
# few hundred milliseconds still loses nothing.
for io in read map; do
	run_c magnet-test stream --name "no-loss/large-records/$io" --io $io \
		--buffer big --run "buffer=big ms=1500 min=4000 max=16000 period_us=4000 burst=1 task_sleep_us=4000" \
		--expect-no-loss
done

# Writers flat out into small buffers, slow reader: the buffer overflows.
flat="ms=1500 min=32 max=512 period_us=200 burst=8"
for io in read poll epoll sigio uring map; do
	run_c magnet-test stream --name "overflow/drop/$io" --io $io \
		--buffer small --run "buffer=small $flat" --read-delay-us 2000 \
		--read-size 4096 --expect-loss
done
run_c magnet-test stream --name "overflow/drop/large-records" --io poll \
	--buffer medium --run "buffer=medium ms=1500 min=2000 max=16000 period_us=500 burst=2" \
	--read-delay-us 2000 --read-size 32768 --expect-loss
for io in read epoll uring; do
	run_c magnet-test stream --name "overflow/overwrite/$io" --io $io \
		--overwrite --buffer flight --run "buffer=flight $flat" \
		--read-delay-us 2000 --read-size 4096 --expect-loss
done
run_c magnet-test stream --name "overflow/overwrite/large-records" --io read \
	--overwrite --buffer flight --run "buffer=flight ms=1500 min=1000 max=4000 period_us=500 burst=2" \
	--read-delay-us 2000 --read-size 8192 --expect-loss

# The in-kernel reader API, keeping up and falling behind.
run_c magnet-test kreader big "$paced"
run_c magnet-test kreader small "$flat"
run_c magnet-test kreader flight "$flat"

run_c magnet-test attrs default

# The reader's wake-up raced against writers publishing as it goes to
# sleep (writers take no full barrier per record; the reader rechecks a
# grace period later). A kprobe on getppid() logs into "medium".
SYM=__x64_sys_getppid
check "a kprobe on $SYM into medium" \
	sh -c "magnetctl probe add wake_race kprobe $SYM buffer medium > /dev/null"
run_c magnet-test wakeups medium ${WAKE_ROUNDS:-3000}
# The mapping of a data file and the consume ioctl: their rules, bad input.
run_c magnet-test mapping medium flight
magnetctl probe del wake_race > /dev/null

unload_all
check "magnet unloads" sh -c '! grep -q "^magnet " /proc/modules'
summary
