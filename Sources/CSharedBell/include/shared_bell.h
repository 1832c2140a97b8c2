// The shared-memory doorbell's atomics and futex calls, which Swift cannot make itself (the
// futex system call is reached through the variadic syscall(2), and the atomics act on memory
// mapped from a file that several processes share).
#ifndef AMBAR_SHARED_BELL_H
#define AMBAR_SHARED_BELL_H

#include <stdint.h>

/// The bell page's header, at offset 0 of the file (little-endian, the machine's layout).
typedef struct ambar_bell_header {
    /// "AMBRBELL" once the page is a bell.
    uint64_t magic;
    /// The layout of the page (1).
    uint32_t layout;
    /// Incremented by every ring; the futex word receivers wait on.
    uint32_t sequence;
    /// The newest ledger token rung (the largest one: rings only raise it).
    int64_t token;
} ambar_bell_header;

/// "AMBRBELL" as a little-endian 64-bit word.
#define AMBAR_BELL_MAGIC 0x4C4C454252424D41ULL
#define AMBAR_BELL_LAYOUT 1u

/// Makes a zeroed page a bell; returns 1 when the page is (now) a bell of this layout, 0 when it
/// holds something else.
int ambar_bell_claim(void *page);
/// The sequence word (acquire).
uint32_t ambar_bell_sequence(const void *page);
/// The newest token rung (acquire).
int64_t ambar_bell_token(const void *page);
/// Raises the token to `token` (never lowers it) and increments the sequence, waking no one: a
/// waiter about to wait returns at once, a sleeping one waits for `ambar_bell_wake`.
void ambar_bell_raise(void *page, int64_t token);
/// Wakes every waiter; returns 0, or errno when the wake failed.
int ambar_bell_wake(void *page);
/// `ambar_bell_raise`, then `ambar_bell_wake`; returns 0, or errno when the wake failed.
int ambar_bell_ring(void *page, int64_t token);
/// Waits until the sequence is no longer `seen`, at most `timeout_ns`; returns 0 (woken, or the
/// sequence had already moved), ETIMEDOUT, EINTR, or another errno.
int ambar_bell_wait(const void *page, uint32_t seen, int64_t timeout_ns);
/// Puts the calling thread in the batch scheduling class (SCHED_BATCH, its nice value kept): its
/// wakeups never preempt a running thread, which then finishes what it does (a commit) first.
/// Returns 0, or errno.
int ambar_bell_thread_defers_to_running(void);

#endif
