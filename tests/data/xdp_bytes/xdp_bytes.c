/* bpf_xdp_load_bytes / bpf_xdp_store_bytes at their boundaries (tests/test_xdp_bytes.py): every program reads the
 * helper's offset argument from the frame's first 8 bytes (a u64: the helper sees its low 32 bits) and writes the
 * helper's result and the buffer back into the frame, so the kernel and our engines are compared byte for byte. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define FILL 0xa5a5a5a5a5a5a5a5ULL

struct big {
	__u8 bytes[65536];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[32]);
} vals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct big);
} bigs SEC(".maps");

/* The offset from the frame (its bounds check, over 60 bytes, is one the compiler keeps). */
#define CONTROL(ctx, data, end, need)                                                                     \
	void *data = (void *)(long)(ctx)->data, *end = (void *)(long)(ctx)->data_end;                     \
	if (data + (need) > end)                                                                          \
		return XDP_DROP;

/* A 24-byte stack buffer at a variable offset; untouched on an error. */
SEC("xdp")
int load_var(struct xdp_md *ctx)
{
	__u64 buf[3] = {FILL, FILL, FILL};
	CONTROL(ctx, data, end, 40);
	long r = bpf_xdp_load_bytes(ctx, *(__u64 *)data, buf, sizeof(buf));
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + 40 > end)
		return XDP_ABORTED;
	*(__u64 *)(data + 8) = r;
	__builtin_memcpy(data + 16, buf, sizeof(buf));
	return r ? XDP_PASS : XDP_TX;
}

/* A constant offset: 47 bytes from byte 14, so 60-byte frames get -EINVAL (odd length: every access width). */
SEC("xdp")
int load_const(struct xdp_md *ctx)
{
	__u8 buf[47];
	__builtin_memset(buf, 0x5a, sizeof(buf));
	long r = bpf_xdp_load_bytes(ctx, 14, buf, sizeof(buf));
	CONTROL(ctx, data, end, 56);
	*(__u64 *)data = r;
	__builtin_memcpy(data + 8, buf, 47);
	return XDP_TX;
}

/* A constant offset past 0xffff: -EFAULT whatever the frame. */
SEC("xdp")
int load_far(struct xdp_md *ctx)
{
	__u64 buf = FILL;
	long r = bpf_xdp_load_bytes(ctx, 0x10000, &buf, sizeof(buf));
	CONTROL(ctx, data, end, 16);
	*(__u64 *)data = r;
	*(__u64 *)(data + 8) = buf;
	return XDP_TX;
}

/* Into a map value (the map is compared too). */
SEC("xdp")
int load_map(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u8 *v = bpf_map_lookup_elem(&vals, &zero);
	if (!v)
		return XDP_ABORTED;
	CONTROL(ctx, data, end, 8);
	long r = bpf_xdp_load_bytes(ctx, *(__u64 *)data, v, 32);
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + 16 > end)
		return XDP_ABORTED;
	*(__u64 *)(data + 8) = r;
	return XDP_TX;
}

/* A length past 0xffff (a 64 KiB map value): -EFAULT, nothing copied. */
SEC("xdp")
int load_huge(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct big *v = bpf_map_lookup_elem(&bigs, &zero);
	if (!v)
		return XDP_ABORTED;
	long r = bpf_xdp_load_bytes(ctx, 0, v, sizeof(*v));
	CONTROL(ctx, data, end, 8);
	*(__u64 *)data = r;
	return XDP_TX;
}

/* 19 bytes from the stack into the frame at a variable offset. */
SEC("xdp")
int store_var(struct xdp_md *ctx)
{
	__u8 src[19];
	CONTROL(ctx, data, end, 16);
	for (int i = 0; i < 19; i++)
		src[i] = 0x30 + i;
	long r = bpf_xdp_store_bytes(ctx, *(__u64 *)data, src, sizeof(src));
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + 16 > end)
		return XDP_ABORTED;
	*(__u64 *)(data + 8) = r;
	return XDP_TX;
}

/* 32 bytes of a map value into the frame at a variable offset; the program fills the value first. */
SEC("xdp")
int store_map(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&vals, &zero);
	if (!v)
		return XDP_ABORTED;
	CONTROL(ctx, data, end, 16);
	v[0] = 0x0706050403020100ULL;
	v[1] += 0x0101010101010101ULL;
	v[3] = *(__u64 *)(data + 8);
	long r = bpf_xdp_store_bytes(ctx, *(__u64 *)data, v, 32);
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + 16 > end)
		return XDP_ABORTED;
	*(__u64 *)(data + 8) = r;
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
