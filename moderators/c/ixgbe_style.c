/*
 * An ixgbe-style adaptive ITR moderator, written for holdoff's tests in the
 * style of the Linux ixgbe driver after its 2017 adaptive-ITR rewrite
 * (drivers/net/ethernet/intel/ixgbe/ixgbe_main.c of torvalds/linux:
 * ixgbe_update_itr, ixgbe_set_itr, ixgbe_write_eitr; constants of ixgbe.h),
 * using holdoff's kernel shims. Called when a NAPI poll completes, with the
 * traffic since the previous call.
 *
 * Each ring container (TX, then RX) gets an 8-bit value: microseconds plus
 * the IXGBE_ITR_ADAPTIVE_LATENCY flag (0x80) in latency mode. The vector
 * takes the smaller of the two values WITH the flag in them, clears the
 * flag and writes usecs << 2 to EITR: a latency-mode value is at least
 * 0x80, so a bulk value (below 0x80) of the other direction wins min().
 *
 * Byte counts: the driver counts frames without the FCS (4 bytes a frame).
 */
#include "kernel_shim.h"

#define IXGBE_ITR_ADAPTIVE_MIN_INC 2
#define IXGBE_ITR_ADAPTIVE_MIN_USECS 10
#define IXGBE_ITR_ADAPTIVE_MAX_USECS 126
#define IXGBE_ITR_ADAPTIVE_LATENCY 0x80
#define IXGBE_ITR_ADAPTIVE_BULK 0x00
#define IXGBE_20K_ITR 200
#define IXGBE_MAX_EITR 0x00000FF8

struct ixgbe_ring_container {
	unsigned int total_bytes;
	unsigned int total_packets;
	unsigned long next_update;
	u8 itr;
};

struct ixgbe_q_vector {
	u16 itr; /* EITR as the driver holds it: usecs << 2 */
	struct ixgbe_ring_container rx, tx;
	u32 link_speed_mbps;
};

static void ixgbe_update_itr(struct ixgbe_q_vector *q_vector,
			     struct ixgbe_ring_container *ring_container)
{
	unsigned int itr = IXGBE_ITR_ADAPTIVE_MIN_USECS | IXGBE_ITR_ADAPTIVE_LATENCY;
	unsigned int avg_wire_size, packets, bytes;
	unsigned long next_update = jiffies;

	/* not updated for more than a jiffy: restart in latency mode */
	if (time_after(next_update, ring_container->next_update))
		goto clear_counts;

	packets = ring_container->total_packets;
	if (!packets) {
		itr = (q_vector->itr >> 2) + IXGBE_ITR_ADAPTIVE_MIN_INC;
		if (itr > IXGBE_ITR_ADAPTIVE_MAX_USECS)
			itr = IXGBE_ITR_ADAPTIVE_MAX_USECS;
		itr += ring_container->itr & IXGBE_ITR_ADAPTIVE_LATENCY;
		goto clear_counts;
	}

	bytes = ring_container->total_bytes;

	/* few small packets: latency mode */
	if (packets < 4 && bytes < 9000) {
		itr = IXGBE_ITR_ADAPTIVE_LATENCY;
		goto adjust_by_size;
	}
	/* between: step up, hold, or step down */
	if (packets < 48) {
		itr = (q_vector->itr >> 2) + IXGBE_ITR_ADAPTIVE_MIN_INC;
		if (itr > IXGBE_ITR_ADAPTIVE_MAX_USECS)
			itr = IXGBE_ITR_ADAPTIVE_MAX_USECS;
		goto clear_counts;
	}
	if (packets < 96) {
		itr = q_vector->itr >> 2;
		goto clear_counts;
	}
	if (packets < 256) {
		itr = q_vector->itr >> 3;
		if (itr < IXGBE_ITR_ADAPTIVE_MIN_USECS)
			itr = IXGBE_ITR_ADAPTIVE_MIN_USECS;
		goto clear_counts;
	}
	/* many packets: bulk mode */
	itr = IXGBE_ITR_ADAPTIVE_BULK;

adjust_by_size:
	avg_wire_size = bytes / packets;
	if (avg_wire_size <= 60)
		avg_wire_size = 5120;
	else if (avg_wire_size <= 316)
		avg_wire_size = avg_wire_size * 40 + 2720;
	else if (avg_wire_size <= 1084)
		avg_wire_size = avg_wire_size * 15 + 11452;
	else if (avg_wire_size < 1968)
		avg_wire_size = avg_wire_size * 5 + 22420;
	else
		avg_wire_size = 32256;

	if (itr & IXGBE_ITR_ADAPTIVE_LATENCY)
		avg_wire_size >>= 1;

	switch (q_vector->link_speed_mbps) {
	case 2500:
	case 1000:
	case 10:
		avg_wire_size = min(avg_wire_size, 8064u);
		itr += DIV_ROUND_UP(avg_wire_size, IXGBE_ITR_ADAPTIVE_MIN_INC * 64) *
		       IXGBE_ITR_ADAPTIVE_MIN_INC;
		break;
	default: /* 10G, 100M and the rest */
		itr += DIV_ROUND_UP(avg_wire_size, IXGBE_ITR_ADAPTIVE_MIN_INC * 256) *
		       IXGBE_ITR_ADAPTIVE_MIN_INC;
		break;
	}

clear_counts:
	ring_container->itr = (u8)itr;
	ring_container->next_update = next_update + 1;
	ring_container->total_bytes = 0;
	ring_container->total_packets = 0;
}

static void ixgbe_write_eitr(struct ixgbe_q_vector *q_vector)
{
	u32 itr_reg = q_vector->itr & IXGBE_MAX_EITR;

	itr_reg |= IXGBE_EITR_CNT_WDIS;
	IXGBE_WRITE_REG(NULL, IXGBE_EITR(0), itr_reg);
}

static void ixgbe_set_itr(struct ixgbe_q_vector *q_vector)
{
	u32 new_itr;

	ixgbe_update_itr(q_vector, &q_vector->tx);
	ixgbe_update_itr(q_vector, &q_vector->rx);

	/* the smaller of the two, latency flag included */
	new_itr = min(q_vector->rx.itr, q_vector->tx.itr);
	new_itr &= ~IXGBE_ITR_ADAPTIVE_LATENCY;
	new_itr <<= 2;

	if (new_itr != q_vector->itr) {
		q_vector->itr = (u16)new_itr;
		ixgbe_write_eitr(q_vector);
	}
}

static void ixgbe_style_init(struct holdoff_ctx *ctx)
{
	struct ixgbe_q_vector *q = ctx->state;

	q->itr = IXGBE_20K_ITR;
	q->rx.itr = q->tx.itr = IXGBE_ITR_ADAPTIVE_MAX_USECS | IXGBE_ITR_ADAPTIVE_LATENCY;
	q->link_speed_mbps = ctx->port->link_mbps;
	/* The driver's zeroed next_update is far behind a running system's
	 * jiffies, so the first update takes the gate; the simulated clock
	 * starts at 0, so "never updated" is one tick before 0. */
	q->rx.next_update = q->tx.next_update = (unsigned long)-1;
	ixgbe_write_eitr(q);
}

void ixgbe_style_poll_done(struct holdoff_ctx *ctx, const struct holdoff_sample *s)
{
	struct ixgbe_q_vector *q = ctx->state;

	q->tx.total_packets += (unsigned int)s->tx_packets;
	q->tx.total_bytes += (unsigned int)(s->tx_bytes - 4 * s->tx_packets);
	q->rx.total_packets += (unsigned int)s->rx_packets;
	q->rx.total_bytes += (unsigned int)(s->rx_bytes - 4 * s->rx_packets);
	ixgbe_set_itr(q);
}

HOLDOFF_MODERATOR(ixgbe_style_poll_done, HOLDOFF_INVOKE_NAPI_COMPLETE, 0, struct ixgbe_q_vector,
		  ixgbe_style_init, 0);
