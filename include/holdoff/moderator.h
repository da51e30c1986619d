/*
 * holdoff C moderator ABI, version 1 (docs/models/c-moderators.md).
 *
 * A moderator is a shared object built from one C file. It exports
 *
 *   void ENTRY(struct holdoff_ctx *ctx, const struct holdoff_sample *s);
 *
 * and its descriptor, defined with HOLDOFF_MODERATOR(ENTRY, ...), which the
 * loader reads first: the ABI version (refused unless equal to the
 * loader's), when the driver calls ENTRY, the bytes of per-vector state,
 * and optional init and work functions. ENTRY writes registers through
 * holdoff_write_reg(); the writes of one call are applied together, through
 * the port's register model, when the call returns.
 *
 * Units: time [ns]; register values in the units of the register id
 * (HOLDOFF_REG_*), as the scenario's register fields name them.
 * Fixed-width types only; no pointer held across calls except ctx->state.
 */
#ifndef HOLDOFF_MODERATOR_H
#define HOLDOFF_MODERATOR_H

#include <stdint.h>

#define HOLDOFF_MODERATOR_ABI_VERSION 1u

/* When the driver calls ENTRY (the core's `Invocation`). */
#define HOLDOFF_INVOKE_NEVER 0u
#define HOLDOFF_INVOKE_PER_INTERRUPT 1u
#define HOLDOFF_INVOKE_PER_POLL 2u
#define HOLDOFF_INVOKE_NAPI_COMPLETE 3u
#define HOLDOFF_INVOKE_PERIODIC 4u
/* Periodic: also call once at interface up. */
#define HOLDOFF_FLAG_PERIODIC_AT_START 1u

/* Register ids: the fields of the core's ModerationParams. */
#define HOLDOFF_REG_ITR_256NS 0u /* ITR, 82574/82575 EITR, 82599 EITR [256 ns] */
#define HOLDOFF_REG_EITR_US 1u   /* 82576+ EITR interval [1 us] */
#define HOLDOFF_REG_RDTR_1024NS 2u
#define HOLDOFF_REG_RADV_1024NS 3u
#define HOLDOFF_REG_TIDV_1024NS 4u
#define HOLDOFF_REG_TADV_1024NS 5u

/* The port's throttle register (struct holdoff_port.throttle). */
#define HOLDOFF_THROTTLE_ITR_256NS 0u
#define HOLDOFF_THROTTLE_EITR_256NS 1u
#define HOLDOFF_THROTTLE_EITR_1US 2u
#define HOLDOFF_THROTTLE_EITR_2048NS 3u
#define HOLDOFF_THROTTLE_ITR_2US 4u /* X710/XL710/E810: ITR in 2 us + INTRL */
#define HOLDOFF_THROTTLE_CQ 5u       /* ConnectX, ENA: completion-queue moderation */

/* Counters since the previous call of this vector's moderator. */
struct holdoff_sample {
	uint64_t now_ns;
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t interrupts;
	uint64_t now_jiffies; /* now at the host's HZ: now_ns * hz / 1e9 */
	uint32_t vector;
	uint32_t reserved;
};

/* What the moderator may know about its port (fixed for a run). */
struct holdoff_port {
	uint32_t link_mbps;
	uint32_t throttle; /* HOLDOFF_THROTTLE_* */
	uint32_t rx_fifo_bytes;
	uint32_t vectors;
	uint32_t vector;
	uint32_t hz;
	uint64_t work_delay_ns; /* a work item's default delay (worker wake-up) */
};

struct holdoff_ctx {
	uint32_t abi_version;
	uint32_t reserved;
	void *state; /* state_bytes of zeroed memory, one block per vector */
	const struct holdoff_port *port;
	void *host; /* opaque; pass to the callbacks */
	/* Register write: applied when the call returns (the last value per register wins). */
	void (*write_reg)(void *host, uint32_t reg, uint32_t value);
	uint64_t (*now_ns)(void *host);
	uint64_t (*get_jiffies)(void *host);
	/* Queue the work function to run delay_ns from now (UINT64_MAX: the
	 * host's worker wake-up, port->work_delay_ns). One item pending at a time. */
	void (*schedule_work)(void *host, uint64_t delay_ns);
	/* An integer of the scenario table's params, or dflt when absent. */
	int64_t (*param)(void *host, const char *name, int64_t dflt);
};

typedef void (*holdoff_fn)(struct holdoff_ctx *ctx);
typedef void (*holdoff_entry_fn)(struct holdoff_ctx *ctx, const struct holdoff_sample *s);

struct holdoff_moderator_desc {
	uint32_t abi_version; /* HOLDOFF_MODERATOR_ABI_VERSION */
	uint32_t invocation;  /* HOLDOFF_INVOKE_* */
	uint64_t period_ns;   /* HOLDOFF_INVOKE_PERIODIC */
	uint32_t state_bytes; /* per-vector state, at most 1 MiB */
	uint32_t flags;       /* HOLDOFF_FLAG_* */
	holdoff_fn init;      /* at interface up, may write the initial registers; or 0 */
	holdoff_fn work;      /* the work item queued by schedule_work; or 0 */
};

/* The context of the call in progress, set by the loader before each call
 * (the shim macros in kernel_shim.h use it). */
extern struct holdoff_ctx *holdoff_current;

#define HOLDOFF_MODERATOR(entry, invocation, period_ns, state_type, init_fn, work_fn) \
	struct holdoff_ctx *holdoff_current __attribute__((weak));                    \
	const struct holdoff_moderator_desc entry##_holdoff_desc = {                  \
		HOLDOFF_MODERATOR_ABI_VERSION, (invocation), (period_ns),             \
		(uint32_t)sizeof(state_type), 0u, (init_fn), (work_fn)}

static inline void holdoff_write_reg(struct holdoff_ctx *c, uint32_t reg, uint32_t value)
{
	c->write_reg(c->host, reg, value);
}

static inline int64_t holdoff_param(struct holdoff_ctx *c, const char *name, int64_t dflt)
{
	return c->param(c->host, name, dflt);
}

#endif /* HOLDOFF_MODERATOR_H */
