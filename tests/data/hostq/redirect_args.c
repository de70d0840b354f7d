/* redirect_args: one bpf_redirect_map call whose map, index and flags come from the args array (tests of host
 * queues and broadcast): args[0] = {u32 map: 0 cpu_map, 1 xsks, 2 ports (devmap), 3 ports_h (devmap_hash);
 * u32 index; u64 flags}. Returns what the helper returns. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct args {
	__u32 map;
	__u32 index;
	__u64 flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct args);
} args SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} cpu_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u32);
} ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u32);
} ports_h SEC(".maps");

SEC("xdp")
int redirect_args(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct args *a = bpf_map_lookup_elem(&args, &zero);

	if (!a)
		return XDP_ABORTED;
	if (a->map == 0)
		return bpf_redirect_map(&cpu_map, a->index, a->flags);
	if (a->map == 1)
		return bpf_redirect_map(&xsks, a->index, a->flags);
	if (a->map == 2)
		return bpf_redirect_map(&ports, a->index, a->flags);
	return bpf_redirect_map(&ports_h, a->index, a->flags);
}

char _license[] SEC("license") = "GPL";
