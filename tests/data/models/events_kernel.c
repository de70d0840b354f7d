// Event helpers against the kernel (tests/test_events.py): the map `args` selects the helper and its arguments,
// every call's return code goes to `rets`, so that the kernel, the models and the RTL can be compared, events
// included.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define CALLS 20
#define BIG 240

struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 4); __type(key, __u32); __type(value, __u32); } args SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, CALLS); __type(key, __u32); __type(value, __s64); } rets SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY); __uint(max_entries, 1); __uint(key_size, 4); __uint(value_size, 4); } perf SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_RINGBUF); __uint(max_entries, 4096); } ring SEC(".maps");

static __always_inline __u32 arg(__u32 i)
{
	__u32 *v = bpf_map_lookup_elem(&args, &i);

	return v ? *v : 0;
}

static __always_inline void ret(__u32 i, __s64 r)
{
	__s64 *v = bpf_map_lookup_elem(&rets, &i);

	if (v)
		*v = r;
}

SEC("xdp")
int events_kernel(struct xdp_md *ctx)
{
	__u32 op = arg(0), a = arg(1), b = arg(2), c = arg(3);
	__u64 buf[BIG / 8];
	__u32 i;

	for (i = 0; i < BIG / 8; i++)
		buf[i] = 0x0101010101010101ULL * (i + 1);
	if (op == 0) {
		ret(0, bpf_perf_event_output(ctx, &perf, ((__u64)b << 32) | a, buf, 16));
		return XDP_PASS;
	}
	if (op == 1) {
		if (a > BIG)
			a = BIG;
		for (i = 0; i < CALLS && i < b; i++) {
			buf[0] = i;
			ret(i, bpf_ringbuf_output(&ring, buf, a, c));
		}
		return XDP_PASS;
	}
	for (i = 0; i < CALLS && i < b; i++) {
		__u64 *r = bpf_ringbuf_reserve(&ring, BIG, c);

		if (!r) {
			ret(i, -1);
			continue;
		}
		buf[0] = i;
		__builtin_memcpy(r, buf, BIG);
		if (i & 1)
			bpf_ringbuf_discard(r, 0);
		else
			bpf_ringbuf_submit(r, 0);
		ret(i, 1);
	}
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
