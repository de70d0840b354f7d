// A store into a devmap entry through its lookup's pointer: Linux makes every devmap read-only to programs (it sets
// BPF_F_RDONLY_PROG), so the kernel verifier refuses it; redirect_map reads these entries beside other cores' writers.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} ports SEC(".maps");

SEC("xdp")
int devmap_write(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u32 *port = bpf_map_lookup_elem(&ports, &key);

	if (!port)
		return XDP_PASS;
	*port = 2;
	return bpf_redirect_map(&ports, 0, XDP_DROP);
}

char _license[] SEC("license") = "GPL";
