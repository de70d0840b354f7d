/* clock: cores reading the shared clock (tests/test_rtl_multicore.py). Every packet counts itself in an atomic
 * counter (so that the cores wait for the map grant), then writes bpf_ktime_get_ns() into its first 8 bytes and
 * returns XDP_TX. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} count SEC(".maps");

SEC("xdp")
int clock(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data;
	__u8 *end = (void *)(long)ctx->data_end;
	__u32 zero = 0;
	__u64 *n, t;

	if (data + 8 > end)
		return XDP_ABORTED;
	n = bpf_map_lookup_elem(&count, &zero);
	if (!n)
		return XDP_ABORTED;
	__sync_fetch_and_add(n, 1);
	t = bpf_ktime_get_ns();
	__builtin_memcpy(data, &t, 8);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
