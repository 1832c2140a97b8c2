/// The version of `sync-agent` (`sync-agent --version`), which `scripts/build-deb` also gives the
/// Debian package. Raise it with each release.
enum SyncAgentVersion {
    static let current = "0.3.0"
}
