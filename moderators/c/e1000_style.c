/*
 * An e1000-style adaptive ITR moderator, written for holdoff's tests in the
 * style of the Linux e1000 driver (drivers/net/ethernet/intel/e1000/
 * e1000_main.c of torvalds/linux: e1000_update_itr, e1000_set_itr), using
 * holdoff's kernel shims. Called at every interrupt with the traffic since
 * the previous one; classifies each direction as lowest/low/bulk latency,
 * takes the larger class, maps it to 70000/20000/4000 interrupts/s (at
 * 1000 Mb/s; 4000/s at other speeds), ramps an increase by a quarter of the
 * target, and writes ITR = 10^9 / (rate * 256) [256 ns].
 *
 * params: itr_setting (3 = dynamic conservative, the default: lowest
 * latency is held at low; 1 = dynamic).
 */
#include "kernel_shim.h"

enum latency_range { lowest_latency = 0, low_latency = 1, bulk_latency = 2, latency_invalid = 255 };

struct e1000_adapter {
	u32 itr;      /* interrupts/s */
	u32 itr_setting;
	u8 tx_itr;
	u8 rx_itr;
	u16 link_speed;
};

static unsigned int e1000_update_itr(struct e1000_adapter *adapter, u16 itr_setting, int packets,
				     int bytes)
{
	unsigned int retval = itr_setting;

	(void)adapter;
	if (unlikely(packets == 0))
		goto update_itr_done;

	switch (itr_setting) {
	case lowest_latency:
		/* jumbo frames get bulk treatment */
		if (bytes / packets > 8000)
			retval = bulk_latency;
		else if ((packets < 5) && (bytes > 512))
			retval = low_latency;
		break;
	case low_latency: /* 50 usec aka 20000 ints/s */
		if (bytes > 10000) {
			if (bytes / packets > 8000)
				retval = bulk_latency;
			else if ((packets < 10) || ((bytes / packets) > 1200))
				retval = bulk_latency;
			else if ((packets > 35))
				retval = lowest_latency;
		} else if (bytes / packets > 2000) {
			retval = bulk_latency;
		} else if (packets <= 2 && bytes < 512) {
			retval = lowest_latency;
		}
		break;
	case bulk_latency: /* 250 usec aka 4000 ints/s */
		if (bytes > 25000) {
			if (packets > 35)
				retval = low_latency;
		} else if (bytes < 6000) {
			retval = low_latency;
		}
		break;
	}

update_itr_done:
	return retval;
}

static void e1000_set_itr(struct e1000_adapter *adapter, const struct holdoff_sample *s)
{
	u16 current_itr;
	u32 new_itr = adapter->itr;

	if (unlikely(adapter->link_speed != 1000)) {
		new_itr = 4000;
		goto set_itr_now;
	}

	adapter->tx_itr = e1000_update_itr(adapter, adapter->tx_itr, (int)s->tx_packets,
					   (int)s->tx_bytes);
	/* conservative mode (itr 3) eliminates the lowest_latency setting */
	if (adapter->itr_setting == 3 && adapter->tx_itr == lowest_latency)
		adapter->tx_itr = low_latency;

	adapter->rx_itr = e1000_update_itr(adapter, adapter->rx_itr, (int)s->rx_packets,
					   (int)s->rx_bytes);
	if (adapter->itr_setting == 3 && adapter->rx_itr == lowest_latency)
		adapter->rx_itr = low_latency;

	current_itr = max(adapter->rx_itr, adapter->tx_itr);

	switch (current_itr) {
	case lowest_latency:
		new_itr = 70000;
		break;
	case low_latency:
		new_itr = 20000; /* aka hwitr = ~200 */
		break;
	case bulk_latency:
		new_itr = 4000;
		break;
	default:
		break;
	}

set_itr_now:
	if (new_itr != adapter->itr) {
		/* this attempts to bias the interrupt rate towards Bulk by adding
		 * intermediate steps when interrupt rate is increasing */
		new_itr = new_itr > adapter->itr ? min(adapter->itr + (new_itr >> 2), new_itr) : new_itr;
		adapter->itr = new_itr;
		ew32(ITR, 1000000000 / (new_itr * 256));
	}
}

static void e1000_style_init(struct holdoff_ctx *ctx)
{
	struct e1000_adapter *adapter = ctx->state;

	adapter->itr_setting = (u32)holdoff_param(ctx, "itr_setting", 3);
	adapter->itr = 20000; /* the driver's start rate */
	adapter->link_speed = (u16)ctx->port->link_mbps;
	ew32(ITR, 1000000000 / (adapter->itr * 256));
}

void e1000_style_update(struct holdoff_ctx *ctx, const struct holdoff_sample *s)
{
	e1000_set_itr(ctx->state, s);
}

HOLDOFF_MODERATOR(e1000_style_update, HOLDOFF_INVOKE_PER_INTERRUPT, 0, struct e1000_adapter,
		  e1000_style_init, 0);
