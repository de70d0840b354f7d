// bpf-to-bpf calls with their own stack frames, a bounded loop, an array map and global data.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

__u64 packets = 0;

static __attribute__((noinline)) __u32 mix(__u32 a, __u32 b)
{
	volatile __u32 buf[4] = {0};
	__u32 i, h = a;

	buf[0] = a;
	buf[1] = b;
	for (i = 0; i < 4; i++)
		h = (h << 5) + h + buf[i & 3];
	return h;
}

static __attribute__((noinline)) __u32 classify(unsigned char *p, void *end)
{
	__u32 h;

	if ((void *)(p + 24) > end)
		return 0;
	h = mix(p[12], p[13]);
	return mix(h, p[23]) & 3;
}

SEC("xdp")
int calls(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 key;
	__u64 *v;

	packets++;
	key = classify(data, data_end);
	v = bpf_map_lookup_elem(&counters, &key);
	if (!v)
		return XDP_ABORTED;
	__sync_fetch_and_add(v, 1);
	if (key == 3)
		return XDP_DROP;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
