// The tests' process helpers (spawning, running, raw hub peers) live in ProcessHarness, which the
// soak uses too; the tests get them with this module.
@_exported import ProcessHarness
