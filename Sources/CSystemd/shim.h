// The parts of libsystemd the agent uses: readiness and watchdog notifications, socket
// activation and the journal's native protocol. Only non-variadic functions are called from Swift.
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/uio.h>
