/* Atomic operations (BPF v3): 32- and 64-bit add/or/and/xor, with and without fetch, xchg and cmpxchg. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[4]);
} cells SEC(".maps");

SEC("xdp")
int atomics(struct xdp_md *ctx)
{
	__u32 k = 0;
	__u64 *c = bpf_map_lookup_elem(&cells, &k);
	if (!c)
		return XDP_ABORTED;
	__u32 *w = (__u32 *)&c[3];
	__sync_fetch_and_add(&c[0], 1);
	__sync_fetch_and_add(w, 1);
	__u64 a = __sync_fetch_and_or(&c[1], 2);
	__u32 b = __sync_fetch_and_and(w, 0xff);
	__u64 x = __sync_fetch_and_xor(&c[2], a);
	__sync_fetch_and_xor(&w[1], 4);
	__u64 old = __sync_val_compare_and_swap(&c[0], a, x);
	__u32 oldw = __sync_val_compare_and_swap(w, b, 9);
	__u64 sw = __atomic_exchange_n(&c[1], 5, __ATOMIC_SEQ_CST);
	__u32 sww = __atomic_exchange_n(&w[1], 6, __ATOMIC_SEQ_CST);
	return (old + oldw + sw + sww + b) & 3;
}

char _license[] SEC("license") = "GPL";
