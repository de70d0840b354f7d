/* host_map_write: a program that writes the host's maps (the kernel's verifier refuses it; without the verifier
 * the hardware faults): args[0] picks map_update_elem on the cpumap (0), map_delete_elem on it (1), or
 * map_update_elem on the xskmap (2). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
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

SEC("xdp")
int host_map_write(struct xdp_md *ctx)
{
	__u32 zero = 0, qsize = 64;
	__u32 *a = bpf_map_lookup_elem(&args, &zero);

	if (!a)
		return XDP_PASS;
	if (*a == 0)
		bpf_map_update_elem(&cpu_map, &zero, &qsize, 0);
	else if (*a == 1)
		bpf_map_delete_elem(&cpu_map, &zero);
	else
		bpf_map_update_elem(&xsks, &zero, &zero, 0);
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
