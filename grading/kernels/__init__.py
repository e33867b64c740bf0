"""The kernel room: start a kernel on private sockets (localkernel, serverkernel), in a sandbox (sandbox, with
the speclab it sees: hidden), watched from outside (watchdog), waited on without lost wake-ups (kernelwait), and
execute a notebook in it (execute: headless; robust: nbgrader's Execute made to survive a submission, its
outputs capped as they arrive: outputs). grade/, judge/ and selfcheck use this room; it imports nothing from them."""
