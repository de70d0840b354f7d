// Board test program for several cores: each packet counted in a per-CPU array (packets, bytes) and, with an
// atomic, in a shared array indexed by get_smp_processor_id; a frame whose byte 0 is odd is dropped, the others
// leave by XDP_TX with the number of the core that ran them in byte 0.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 2);
} pcount SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 8);
} bycpu SEC(".maps");

SEC("xdp")
int cores_prog(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 k0 = 0, k1 = 1, cpu = bpf_get_smp_processor_id();
	__u64 *v;

	if ((void *)(data + 2) > data_end)
		return XDP_ABORTED;
	v = bpf_map_lookup_elem(&pcount, &k0);
	if (v)
		*v += 1;
	v = bpf_map_lookup_elem(&pcount, &k1);
	if (v)
		*v += (void *)data_end - (void *)data;
	v = bpf_map_lookup_elem(&bycpu, &cpu);
	if (v)
		__sync_fetch_and_add(v, 1);
	if (data[0] & 1)
		return XDP_DROP;
	data[0] = cpu;
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
