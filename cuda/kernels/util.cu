// An empty kernel: its event-timed launch is the backend's dispatch latency.
extern "C" __global__ void empty_kernel() {}

// busy_kernel keeps one thread busy for ns nanoseconds of the device's
// global timer (and at most about 2^20 sleeps of a quarter microsecond,
// should the timer not advance). Queued timing (Backend.SetQueuedTiming)
// launches it ahead of an operation's first event, so that the
// operation's launch is already waiting in the queue when the event is
// reached. The host emulation, which runs each launch to its end before
// the next, has nothing to wait for and returns at once.
extern "C" __global__ void busy_kernel(unsigned long long ns) {
#ifdef __CUDA_ARCH__
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (unsigned int i = 0; i < (1u << 20); i++) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns) {
            break;
        }
        __nanosleep(256);
    }
#else
    (void)ns;
#endif
}
