/*
 * Linux generic DIM (net_dim) as a holdoff C moderator.
 *
 * Written for holdoff from a reading of lib/dim/net_dim.c, lib/dim/dim.c and
 * include/linux/dim.h of torvalds/linux (GPL-2.0 OR Linux-OpenIB; the state
 * machine, its constants, profiles and function names are the facts carried
 * over). The driver side is the one holdoff's built-in `dim` kind models
 * (crates/holdoff-core/src/moderation/dim.rs): called at every NAPI poll
 * with the traffic since the previous poll, the driver keeps wrapping
 * counters (u16 events, u32 packets and bytes) and calls net_dim with them;
 * a changed profile index queues the driver's work item (schedule_work),
 * which writes the profile's usec to EITR and restarts the measurement.
 *
 * Kernel version: a zero elapsed time ends the call without a decision
 * (dim_calc_stats returns false), as current kernels do.
 *
 * params: profile (0 rx-eqe, the default; 1 rx-cqe; 2 tx-eqe; 3 tx-cqe),
 * start_index (0..4, default 1: NET_DIM_DEF_PROFILE_EQE/CQE).
 */
#include "kernel_shim.h"

#define NET_DIM_PARAMS_NUM_PROFILES 5
#define DIM_NEVENTS 64
#define BIT_GAP(bits, end, start) ((((end) - (start)) + BIT_ULL(bits)) & (BIT_ULL(bits) - 1))
#define BIT_ULL(n) (1ULL << (n))
#define BITS_PER_TYPE(t) (sizeof(t) * 8)
#define IS_SIGNIFICANT_DIFF(val, ref) ((ref) && (((100UL * abs((val) - (ref))) / (ref)) > 10))

enum dim_state { DIM_START_MEASURE, DIM_MEASURE_IN_PROGRESS, DIM_APPLY_NEW_PROFILE };
enum dim_tune_state { DIM_PARKING_ON_TOP, DIM_PARKING_TIRED, DIM_GOING_RIGHT, DIM_GOING_LEFT };
enum dim_stats_state { DIM_STATS_WORSE, DIM_STATS_SAME, DIM_STATS_BETTER };
enum dim_step_result { DIM_STEPPED, DIM_TOO_TIRED, DIM_ON_EDGE };

struct dim_cq_moder {
	u16 usec;
	u16 pkts;
};

struct dim_sample {
	ktime_t time;
	u32 pkt_ctr;
	u32 byte_ctr;
	u16 event_ctr;
};

struct dim_stats {
	int ppms;
	int bpms;
	int epms;
};

struct dim {
	u8 state;
	struct dim_stats prev_stats;
	struct dim_sample start_sample;
	struct work_struct work;
	u8 profile_ix;
	u8 tune_state;
	u8 steps_right;
	u8 steps_left;
	u8 tired;
};

/* The driver's side: its ring's counters and the profile set in use. */
struct dim_driver {
	struct dim dim;
	struct dim_sample counters;
	u32 profile_set;
};

static const struct dim_cq_moder profiles[4][NET_DIM_PARAMS_NUM_PROFILES] = {
	{{1, 256}, {8, 256}, {64, 256}, {128, 256}, {256, 256}}, /* rx, EQE */
	{{2, 256}, {8, 128}, {16, 64}, {32, 64}, {64, 64}},      /* rx, CQE */
	{{1, 128}, {8, 128}, {32, 128}, {64, 128}, {128, 128}},  /* tx, EQE */
	{{5, 128}, {8, 64}, {16, 32}, {32, 32}, {64, 32}},       /* tx, CQE */
};

static bool dim_on_top(struct dim *dim)
{
	if (dim->tune_state == DIM_PARKING_ON_TOP || dim->tune_state == DIM_PARKING_TIRED)
		return true;
	if (dim->tune_state == DIM_GOING_RIGHT)
		return dim->steps_left > 1 && dim->steps_right == 1;
	return dim->steps_right > 1 && dim->steps_left == 1; /* going left */
}

static void dim_turn(struct dim *dim)
{
	if (dim->tune_state == DIM_GOING_RIGHT) {
		dim->tune_state = DIM_GOING_LEFT;
		dim->steps_left = 0;
	} else if (dim->tune_state == DIM_GOING_LEFT) {
		dim->tune_state = DIM_GOING_RIGHT;
		dim->steps_right = 0;
	}
}

static void dim_park_on_top(struct dim *dim)
{
	dim->steps_right = dim->steps_left = dim->tired = 0;
	dim->tune_state = DIM_PARKING_ON_TOP;
}

static void dim_park_tired(struct dim *dim)
{
	dim->steps_right = dim->steps_left = 0;
	dim->tune_state = DIM_PARKING_TIRED;
}

static bool dim_calc_stats(const struct dim_sample *start, const struct dim_sample *end,
			   struct dim_stats *st)
{
	u32 delta_us = (u32)ktime_us_delta(end->time, start->time);
	u32 npkts = (u32)BIT_GAP(BITS_PER_TYPE(u32), end->pkt_ctr, start->pkt_ctr);
	u32 nbytes = (u32)BIT_GAP(BITS_PER_TYPE(u32), end->byte_ctr, start->byte_ctr);

	if (!delta_us)
		return false;
	st->ppms = DIV_ROUND_UP(npkts * USEC_PER_MSEC, delta_us);
	st->bpms = DIV_ROUND_UP(nbytes * USEC_PER_MSEC, delta_us);
	st->epms = DIV_ROUND_UP(DIM_NEVENTS * USEC_PER_MSEC, delta_us);
	return true;
}

static int net_dim_step(struct dim *dim)
{
	if (dim->tired == NET_DIM_PARAMS_NUM_PROFILES * 2)
		return DIM_TOO_TIRED;
	if (dim->tune_state == DIM_GOING_RIGHT) {
		if (dim->profile_ix == NET_DIM_PARAMS_NUM_PROFILES - 1)
			return DIM_ON_EDGE;
		dim->profile_ix++;
		dim->steps_right++;
	} else if (dim->tune_state == DIM_GOING_LEFT) {
		if (dim->profile_ix == 0)
			return DIM_ON_EDGE;
		dim->profile_ix--;
		dim->steps_left++;
	}
	dim->tired++;
	return DIM_STEPPED;
}

static void net_dim_exit_parking(struct dim *dim)
{
	dim->tune_state = dim->profile_ix ? DIM_GOING_LEFT : DIM_GOING_RIGHT;
	net_dim_step(dim);
}

/* More bytes/ms is better, then more packets/ms, then fewer events/ms;
 * a difference counts when it is more than 10 % of the reference. */
static int net_dim_stats_compare(const struct dim_stats *curr, const struct dim_stats *prev)
{
	if (!prev->bpms)
		return curr->bpms ? DIM_STATS_BETTER : DIM_STATS_SAME;
	if (IS_SIGNIFICANT_DIFF(curr->bpms, prev->bpms))
		return curr->bpms > prev->bpms ? DIM_STATS_BETTER : DIM_STATS_WORSE;
	if (!prev->ppms)
		return curr->ppms ? DIM_STATS_BETTER : DIM_STATS_SAME;
	if (IS_SIGNIFICANT_DIFF(curr->ppms, prev->ppms))
		return curr->ppms > prev->ppms ? DIM_STATS_BETTER : DIM_STATS_WORSE;
	if (!prev->epms)
		return DIM_STATS_SAME;
	if (IS_SIGNIFICANT_DIFF(curr->epms, prev->epms))
		return curr->epms < prev->epms ? DIM_STATS_BETTER : DIM_STATS_WORSE;
	return DIM_STATS_SAME;
}

static bool net_dim_decision(const struct dim_stats *curr, struct dim *dim)
{
	int prev_state = dim->tune_state;
	int prev_ix = dim->profile_ix;

	switch (dim->tune_state) {
	case DIM_PARKING_ON_TOP:
		if (net_dim_stats_compare(curr, &dim->prev_stats) != DIM_STATS_SAME)
			net_dim_exit_parking(dim);
		break;
	case DIM_PARKING_TIRED:
		if (!--dim->tired)
			net_dim_exit_parking(dim);
		break;
	default: /* going right or left */
		if (net_dim_stats_compare(curr, &dim->prev_stats) != DIM_STATS_BETTER)
			dim_turn(dim);
		if (dim_on_top(dim)) {
			dim_park_on_top(dim);
			break;
		}
		switch (net_dim_step(dim)) {
		case DIM_ON_EDGE:
			dim_park_on_top(dim);
			break;
		case DIM_TOO_TIRED:
			dim_park_tired(dim);
			break;
		}
		break;
	}
	/* the reference stays frozen while parked on top */
	if (prev_state != DIM_PARKING_ON_TOP || dim->tune_state != DIM_PARKING_ON_TOP)
		dim->prev_stats = *curr;
	return dim->profile_ix != prev_ix;
}

static void net_dim(struct dim *dim, struct dim_sample end)
{
	struct dim_stats curr;
	u16 nevents;

	switch (dim->state) {
	case DIM_MEASURE_IN_PROGRESS:
		nevents = (u16)BIT_GAP(BITS_PER_TYPE(u16), end.event_ctr, dim->start_sample.event_ctr);
		if (nevents < DIM_NEVENTS)
			break;
		if (!dim_calc_stats(&dim->start_sample, &end, &curr))
			break;
		if (net_dim_decision(&curr, dim)) {
			dim->state = DIM_APPLY_NEW_PROFILE;
			schedule_work(&dim->work);
			break;
		}
		fallthrough;
	case DIM_START_MEASURE:
		dim->start_sample = end;
		dim->state = DIM_MEASURE_IN_PROGRESS;
		break;
	case DIM_APPLY_NEW_PROFILE:
		break;
	}
}

static void write_profile(struct dim_driver *drv)
{
	wr32(HOLDOFF_REG_EITR_US, profiles[drv->profile_set][drv->dim.profile_ix].usec);
}

static void net_dim_init(struct holdoff_ctx *ctx)
{
	struct dim_driver *drv = ctx->state;
	int64_t set = holdoff_param(ctx, "profile", 0);
	int64_t ix = holdoff_param(ctx, "start_index", 1);

	drv->profile_set = (u32)clamp_t(int64_t, set, 0, 3);
	drv->dim.profile_ix = (u8)clamp_t(int64_t, ix, 0, NET_DIM_PARAMS_NUM_PROFILES - 1);
	write_profile(drv);
}

/* The driver's work item (e.g. mlx5e_rx_dim_work): program, measure anew. */
static void net_dim_work(struct holdoff_ctx *ctx)
{
	struct dim_driver *drv = ctx->state;

	if (drv->dim.state != DIM_APPLY_NEW_PROFILE)
		return;
	write_profile(drv);
	drv->dim.state = DIM_START_MEASURE;
}

/* At the end of every NAPI poll. */
void net_dim_poll(struct holdoff_ctx *ctx, const struct holdoff_sample *s)
{
	struct dim_driver *drv = ctx->state;
	bool rx = drv->profile_set < 2;

	drv->counters.time = (ktime_t)s->now_ns;
	drv->counters.event_ctr += (u16)s->interrupts;
	drv->counters.pkt_ctr += (u32)(rx ? s->rx_packets : s->tx_packets);
	drv->counters.byte_ctr += (u32)(rx ? s->rx_bytes : s->tx_bytes);
	net_dim(&drv->dim, drv->counters);
}

HOLDOFF_MODERATOR(net_dim_poll, HOLDOFF_INVOKE_PER_POLL, 0, struct dim_driver, net_dim_init,
		  net_dim_work);
