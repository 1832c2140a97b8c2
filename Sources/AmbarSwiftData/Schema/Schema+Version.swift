extension Schema {
    /// A schema's version, as a ``VersionedSchema`` names it: `Schema.Version(1, 0, 0)`.
    public struct Version: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
        /// The major number.
        public let major: Int
        /// The minor number.
        public let minor: Int
        /// The patch number.
        public let patch: Int

        /// The version `major.minor.patch`.
        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }

        /// Orders versions by major, then minor, then patch number.
        public static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }

        /// `major.minor.patch`.
        public var description: String { "\(major).\(minor).\(patch)" }
    }
}
