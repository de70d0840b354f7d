// Helper semantics against the kernel (tests/test_models_kernel.py): the map `args` selects the helper and its
// argument, the program returns the helper's result so that the kernel and the models can be compared.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 4); __type(key, __u32); __type(value, __s32); } args SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_DEVMAP); __uint(max_entries, 4); __type(key, __u32); __type(value, __u32); } ports SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_DEVMAP_HASH); __uint(max_entries, 4); __type(key, __u32); __type(value, __u32); } ports_h SEC(".maps");

static __always_inline __s32 arg(__u32 i)
{
	__s32 *v = bpf_map_lookup_elem(&args, &i);

	return v ? *v : 0;
}

SEC("xdp")
int helpers_kernel(struct xdp_md *ctx)
{
	__s32 op = arg(0), delta = arg(1), seed = arg(2);
	void *data, *data_end;

	if (op == 0)
		return bpf_xdp_adjust_head(ctx, delta);
	if (op == 1)
		return bpf_xdp_adjust_tail(ctx, delta);
	if (op == 2)
		return bpf_xdp_adjust_meta(ctx, delta);
	if (op == 9)
		return bpf_redirect_map(&ports, delta, seed);
	if (op == 10)
		return bpf_redirect_map(&ports_h, delta, seed);
	if (op == 11)
		return bpf_redirect(delta, seed);
	if (op == 3) {
		long r = bpf_xdp_adjust_meta(ctx, -8);

		if (r)
			return 100;
		r = bpf_xdp_adjust_head(ctx, delta);
		data = (void *)(long)ctx->data_meta;
		data_end = (void *)(long)ctx->data;
		if (data + 8 <= data_end)
			*(__u64 *)data = 0x1122334455667788ULL;
		return r;
	}
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + 60 > data_end)
		return 200;
	if (op == 4)
		return bpf_csum_diff(data, 8, data + 8, 12, seed);
	if (op == 5)
		return bpf_csum_diff(0, 0, data + 4, 20, seed);
	if (op == 6)
		return bpf_csum_diff(data + 2, 36, 0, 0, seed);
	if (op == 7)
		return bpf_csum_diff(data, 6, data + 20, 10, seed);
	return bpf_csum_diff(0, 0, 0, 0, seed);
}

char _license[] SEC("license") = "GPL";
