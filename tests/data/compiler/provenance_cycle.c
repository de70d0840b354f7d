/* fuzz seed 2026 #1801: a loop whose r3 the provenance analysis flipped between 'unknown' and 'some scalar' for
 * ever (a fresh join of the predecessors each round, with non-monotone transfers); the compiler hung. In-states
 * now only go up. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct val { __u64 a; __u64 b; __u32 c; __u32 d; };

struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 8); __type(key, __u32);
	__type(value, struct val); } arr SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 8); __type(key, __u32);
	__type(value, struct val); } hmap SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, 4); __type(key, __u32);
	__type(value, struct val); } pca SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_DEVMAP); __uint(max_entries, 4); __type(key, __u32);
	__type(value, __u32); } devs SEC(".maps");

union stk { __u8 b[32]; __u16 h[16]; __u32 w[8]; __u64 d[4]; };

SEC("xdp")
int fz_2026_1801(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *p = data;
	volatile union stk st;
	if (data + 100 > data_end)
		return XDP_PASS;
	__u64 v0 = 0xbc2c6e38a6940bb0ULL;
	__u64 v1 = *(__u8 *)(p + 18);
	__u64 v2 = *(__u8 *)(p + 44);
	__u64 v3 = 0x40ULL;
	__u64 v4 = *(__u8 *)(p + 59);
	__u64 v5 = 0xa3a186131fc6b0aULL;
	__u64 v6 = 0x1ULL;
	__u64 v7 = ctx->ingress_ifindex;
	st.d[0] = 0;
	st.d[1] = 0;
	st.d[2] = 0;
	st.d[3] = 0;
	{
		__u32 k1 = (__u32)(v2) & 3;
		struct val *m2 = bpf_map_lookup_elem(&pca, &k1);
		if (m2) {
			if (data + 124 <= data_end) {
				v2 = (__u64)((__u64)0xf4af30a24ae49b58ULL << 26);
				if ((__u64)m2->d < (__u64)0x3ULL) {
					{
						__u32 k3 = (__u32)(v6) & 15;
						v1 += (__u64)bpf_map_delete_elem(&hmap, &k3);
					}
				}
			}
			{
				__u32 k4 = (__u32)(m2->a) & 15;
				v4 += (__u64)bpf_map_delete_elem(&hmap, &k4);
			}
		}
	}
	{
		__u32 k5 = (__u32)(v0) & 3;
		struct val *m6 = bpf_map_lookup_elem(&pca, &k5);
		if (m6) {
			v1 += *(__u16 *)(p + 90);
			{
				__u32 k7 = (__u32)(v3) & 7;
				struct val *m8 = bpf_map_lookup_elem(&arr, &k7);
				if (m8) {
					{
						__u16 *cd = (__u16 *)(p + 65), *cs = (__u16 *)((__u8 *)(void *)&st + 20);
						__u16 c0 = cs[0], c1 = cs[1], c2 = cs[2];
						cd[0] = c0;
						cd[1] = c1;
						cd[2] = c2;
					}
					v5 += *(__u32 *)(p + 32);
					v6 += (__u64)((__u64)v5 / 51782ULL);
				}
			}
			{
				__u64 u9 = v2;
				asm volatile("%0 &= %1" : "+r"(v1) : "r"(u9));
			}
		} else {
			if (bpf_xdp_adjust_meta(ctx, -36))
				return 1;
			data = (void *)(long)ctx->data;
			data_end = (void *)(long)ctx->data_end;
			if (data + 100 > data_end)
				return 1;
			p = data;
			{
				__u8 *mt10 = (void *)(long)ctx->data_meta;
				if ((void *)(mt10 + 4) <= data) {
					*(__u32 *)(mt10 + 0) = (__u32)v1;
					v7 ^= *(__u32 *)(mt10 + 0);
				}
			}
		}
	}
	{
		__u32 t11 = (__u32)v2, u12 = (__u32)v6;
		asm volatile("%0 -= %1" : "+w"(t11) : "w"(u12));
		v2 = t11;
	}
	{
		__u32 k13 = (__u32)(v7) & 15;
		struct val *m14 = bpf_map_lookup_elem(&hmap, &k13);
		if (m14) {
			if ((__u32)v2 > (__u32)0x3fULL) {
				if ((__u32)m14->b < (__u32)v4) {
					{
						__u32 k15 = (__u32)(v2) & 7;
						struct val nv16 = { v2, *(__u16 *)(p + 83), bpf_ntohs(*(__u16 *)(p + 78)), v3 };
						v0 += (__u64)bpf_map_update_elem(&pca, &k15, &nv16, BPF_NOEXIST);
					}
					*(__u16 *)(p + 73) = (__u16)v7;
					v7 += (__u32)((__u32)bpf_ntohs(*(__u16 *)(p + 68)) >> ((__u32)v2 & 31));
				}
				v3 |= (__u32)((__u32)v3 * (__u32)m14->c);
				#pragma clang loop unroll(disable)
				for (__u32 i17 = 0; i17 < 8; i17++) {
					__u8 *q18 = p + 19 + i17 * 8;
					if ((void *)(q18 + 2) > data_end)
						break;
					*(__u16 *)q18 = (__u16)(v5 + i17);
				}
			} else {
				v5 ^= (__u64)((__u64)0xad323bb39608734dULL & (__u64)v2);
			}
			st.b[28] = (__u8)v5;
		} else {
			v6 += st.d[0];
		}
	}
	return 2;
}

char _license[] SEC("license") = "GPL";
