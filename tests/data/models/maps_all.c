// Every map type the hardware implements, for the MapState-vs-kernel differential test (tests/test_maps.py).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct key6 { __u8 b[6]; };
struct key16 { __u8 b[16]; };
struct lpm_key { __u32 prefixlen; __u8 data[4]; };

struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 6); __type(key, __u32); __type(value, __u64); } m_hash SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 5); __type(key, struct key6); __type(value, __u32); } m_hash6 SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 4); __type(key, struct key16); __type(value, __u16); } m_hash16 SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_PERCPU_HASH); __uint(max_entries, 5); __type(key, __u32); __type(value, __u32); } m_pchash SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_LRU_HASH); __uint(max_entries, 64); __type(key, __u32); __type(value, __u64); } m_lru SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 5); __type(key, __u32); __type(value, __u64); } m_array SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, 3); __type(key, __u32); __type(value, __u32); } m_parray SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_LPM_TRIE); __uint(max_entries, 6); __uint(map_flags, BPF_F_NO_PREALLOC);
         __type(key, struct lpm_key); __type(value, __u32); } m_lpm SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_DEVMAP); __uint(max_entries, 4); __type(key, __u32); __type(value, __u32); } m_devmap SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_DEVMAP_HASH); __uint(max_entries, 4); __type(key, __u32); __type(value, __u32); } m_devhash SEC(".maps");

SEC("xdp")
int maps_all(struct xdp_md *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&m_array, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return bpf_redirect_map(&m_devmap, 0, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
