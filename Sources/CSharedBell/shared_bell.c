// SCHED_BATCH is a Linux extension.
#define _GNU_SOURCE
#include "shared_bell.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int ambar_bell_claim(void *page) {
    ambar_bell_header *header = page;
    uint64_t expected = 0;
    if (__atomic_compare_exchange_n(&header->magic, &expected, AMBAR_BELL_MAGIC, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&header->layout, AMBAR_BELL_LAYOUT, __ATOMIC_RELEASE);
        return 1;
    }
    if (expected != AMBAR_BELL_MAGIC) return 0;
    // Another process claimed it a moment ago and may not have written the layout yet.
    uint32_t layout = __atomic_load_n(&header->layout, __ATOMIC_ACQUIRE);
    return layout == 0 || layout == AMBAR_BELL_LAYOUT;
}

uint32_t ambar_bell_sequence(const void *page) {
    const ambar_bell_header *header = page;
    return __atomic_load_n(&header->sequence, __ATOMIC_ACQUIRE);
}

int64_t ambar_bell_token(const void *page) {
    const ambar_bell_header *header = page;
    return __atomic_load_n(&header->token, __ATOMIC_ACQUIRE);
}

void ambar_bell_raise(void *page, int64_t token) {
    ambar_bell_header *header = page;
    int64_t current = __atomic_load_n(&header->token, __ATOMIC_RELAXED);
    while (current < token &&
           !__atomic_compare_exchange_n(&header->token, &current, token, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
    __atomic_add_fetch(&header->sequence, 1, __ATOMIC_RELEASE);
}

int ambar_bell_wake(void *page) {
    ambar_bell_header *header = page;
    // A shared (not private) futex: the waiters are other processes mapping the same file.
    if (syscall(SYS_futex, &header->sequence, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) < 0) return errno;
    return 0;
}

int ambar_bell_ring(void *page, int64_t token) {
    ambar_bell_raise(page, token);
    return ambar_bell_wake(page);
}

int ambar_bell_wait(const void *page, uint32_t seen, int64_t timeout_ns) {
    const ambar_bell_header *header = page;
    struct timespec timeout = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
    if (syscall(SYS_futex, &header->sequence, FUTEX_WAIT, seen, &timeout, NULL, 0) < 0) {
        // EAGAIN: the sequence had already moved, which is a ring.
        return errno == EAGAIN ? 0 : errno;
    }
    return 0;
}

int ambar_bell_thread_defers_to_running(void) {
    struct sched_param parameters = {.sched_priority = 0};
    // 0: the calling thread (on Linux, sched_setscheduler applies to one thread).
    return sched_setscheduler(0, SCHED_BATCH, &parameters) == 0 ? 0 : errno;
}
