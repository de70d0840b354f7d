/* Records to the host from several cores (docs/execution_contract.md section 8, "Events"), with no state the cores
 * share: a frame's record depends on the frame and its core only, so N cores give each packet the records one core
 * gives it, each perf record on its core's CPU. Byte 0 & 3 of the frame picks the helpers:
 *   0: perf_event_output on the running CPU (BPF_F_CURRENT_CPU) of a 16-byte header and the frame's first 24 bytes;
 *   1: ringbuf_output of the header;
 *   2: ringbuf_reserve of a record filled from the frame, submitted (discarded when byte 1 is odd);
 *   3: a reserved record and a perf record, the reserved one submitted last.
 * The header is bytes 0..15 of the frame with byte 15 replaced by the frame's length. Every frame passes.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ring SEC(".maps");

struct rec {
	__u64 head[2];
	__u64 tail;
};

SEC("xdp")
int events(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u8 *p = data;
	__u64 head[2];
	struct rec *r;
	__u32 op;

	if (data + 24 > data_end)
		return XDP_PASS;
	op = p[0] & 3;
	__builtin_memcpy(head, data, 16);
	((__u8 *)head)[15] = (__u8)(data_end - data);
	if (op == 0) {
		bpf_perf_event_output(ctx, &perf, BPF_F_CURRENT_CPU | (24ULL << 32), head, sizeof(head));
		return XDP_PASS;
	}
	if (op == 1) {
		bpf_ringbuf_output(&ring, head, sizeof(head), 0);
		return XDP_PASS;
	}
	r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);
	if (!r)
		return XDP_PASS;
	r->head[0] = head[0];
	r->head[1] = head[1];
	r->tail = *(__u64 *)(p + 16);
	if (op == 3)
		bpf_perf_event_output(ctx, &perf, BPF_F_CURRENT_CPU, head, sizeof(head));
	if (op == 2 && (p[1] & 1))
		bpf_ringbuf_discard(r, 0);
	else
		bpf_ringbuf_submit(r, 0);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
