// A test imports one module for its fixtures. The child processes and the loopback ports live in
// targets of their own, below `KSMLoad`, so `ksm bench` and `ksm demo` use them without linking
// this module (and its watchdog) into the shipping binary; tests get them from here.
@_exported import ChildProcesses
@_exported import Loopback
