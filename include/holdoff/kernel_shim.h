/*
 * Kernel shims for holdoff C moderators: enough of the Linux kernel's
 * vocabulary that a driver's moderation function compiles nearly unchanged
 * (docs/models/c-moderators.md). Semantics follow the kernel's definitions
 * (include/linux/minmax.h, math.h, jiffies.h, ktime.h, compiler.h of
 * torvalds/linux); time comes from the simulated clock of the call in
 * progress (holdoff_current), never from the machine.
 *
 * Simplified: min/max evaluate their arguments once (GNU statement
 * expressions) but do not check the types; schedule_work queues the
 * moderator's one work function (its descriptor's `work`), whatever
 * work_struct is named; register addresses are holdoff register ids.
 */
#ifndef HOLDOFF_KERNEL_SHIM_H
#define HOLDOFF_KERNEL_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "moderator.h"

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef uint16_t __le16;
typedef uint32_t __le32;
typedef int64_t ktime_t;

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define BIT(n) (1UL << (n))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define fallthrough __attribute__((__fallthrough__))

#define min(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a > _b ? _a : _b; })
#define min_t(t, a, b) ({ t _a = (t)(a); t _b = (t)(b); _a < _b ? _a : _b; })
#define max_t(t, a, b) ({ t _a = (t)(a); t _b = (t)(b); _a > _b ? _a : _b; })
#define clamp(v, lo, hi) min(max(v, lo), hi)
#define clamp_t(t, v, lo, hi) min_t(t, max_t(t, v, lo), hi)
#define clamp_val(v, lo, hi) clamp_t(__typeof__(v), v, lo, hi)
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define DIV_ROUND_CLOSEST(n, d) (((n) + ((d) / 2)) / (d))
#ifndef abs
#define abs(x) ({ __typeof__(x) _x = (x); _x < 0 ? -_x : _x; })
#endif

#define USEC_PER_MSEC 1000L
#define NSEC_PER_USEC 1000L
#define NSEC_PER_MSEC 1000000L
#define NSEC_PER_SEC 1000000000L

/* jiffies (include/linux/jiffies.h): the host's HZ clock of the simulation. */
#define HZ ((unsigned long)holdoff_current->port->hz)
#define jiffies ((unsigned long)holdoff_current->get_jiffies(holdoff_current->host))
#define time_after(a, b) ((long)((b) - (a)) < 0)
#define time_before(a, b) time_after(b, a)
#define time_after_eq(a, b) ((long)((a) - (b)) >= 0)
#define time_before_eq(a, b) time_after_eq(b, a)
static inline unsigned long msecs_to_jiffies(unsigned int m)
{
	return ((unsigned long)m * HZ + 999) / 1000;
}
static inline unsigned long usecs_to_jiffies(unsigned int u)
{
	return ((unsigned long)u * HZ + 999999) / 1000000;
}
static inline unsigned int jiffies_to_msecs(unsigned long j)
{
	return (unsigned int)(j * 1000 / HZ);
}

/* ktime (include/linux/ktime.h): ns of the simulated clock. */
static inline ktime_t ktime_get(void)
{
	return (ktime_t)holdoff_current->now_ns(holdoff_current->host);
}
#define ktime_to_ns(kt) ((s64)(kt))
#define ktime_to_us(kt) ((s64)(kt) / 1000)
#define ktime_sub(a, b) ((a) - (b))
#define ktime_us_delta(a, b) (ktime_to_us(ktime_sub(a, b)))

/* Work items: the moderator's descriptor `work` function, run by the
 * simulated kernel worker `delay` later. */
struct work_struct {
	int unused;
};
struct delayed_work {
	struct work_struct work;
};
static inline bool schedule_work(struct work_struct *w)
{
	(void)w;
	holdoff_current->schedule_work(holdoff_current->host, UINT64_MAX);
	return true;
}
static inline bool schedule_delayed_work(struct delayed_work *dw, unsigned long delay)
{
	(void)dw;
	holdoff_current->schedule_work(holdoff_current->host,
				       (uint64_t)delay * 1000000000ull / HZ);
	return true;
}
#define queue_work(wq, w) ((void)(wq), schedule_work(w))

/* Register writes: `hw` is ignored; addresses are holdoff register ids. */
#define E1000_ITR HOLDOFF_REG_ITR_256NS
#define E1000_EITR_82574(n) HOLDOFF_REG_ITR_256NS
#define E1000_RDTR HOLDOFF_REG_RDTR_1024NS
#define E1000_RADV HOLDOFF_REG_RADV_1024NS
#define E1000_TIDV HOLDOFF_REG_TIDV_1024NS
#define E1000_TADV HOLDOFF_REG_TADV_1024NS
/* 82599 EITR: a 256 ns count of which bits 11:3 are held; the model writes
 * without restarting the countdown, so CNT_WDIS is accepted and dropped. */
#define IXGBE_EITR(n) HOLDOFF_REG_ITR_256NS
#define IXGBE_EITR_CNT_WDIS 0x80000000u
#define ew32(reg, val) holdoff_write_reg(holdoff_current, E1000_##reg, (u32)(val))
#define wr32(reg, val) holdoff_write_reg(holdoff_current, (reg), (u32)(val))
#define writel(val, reg) holdoff_write_reg(holdoff_current, (reg), (u32)(val))
#define IXGBE_WRITE_REG(hw, reg, val) \
	((void)(hw), holdoff_write_reg(holdoff_current, (reg), (u32)(val) & ~IXGBE_EITR_CNT_WDIS))

#endif /* HOLDOFF_KERNEL_SHIM_H */
