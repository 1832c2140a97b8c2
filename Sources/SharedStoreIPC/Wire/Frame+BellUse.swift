import Foundation

extension Frame {
    /// How a process uses the store's shared-memory bell, as its ``Hello`` says (protocol
    /// version 3).
    ///
    /// The hub uses it to leave out frames a process does not need: a `didSave` or `tokenOnly`
    /// from a process that rings the bell is not relayed to a process that hears the same bell
    /// (the same file: device and inode), since the sender woke it already. Frames from the
    /// database server's listener, and frames between processes that do not share a bell, are
    /// relayed as before.
    ///
    /// ```swift
    /// let hello = Frame.Hello(
    ///     storeUUID: uuid, processID: getpid(), instanceID: ProcessInstance.id, processName: "viewer", cursor: 0,
    ///     bell: .init(device: 2049, inode: 131_074, rings: true, hears: true))
    /// ```
    public struct BellUse: Sendable, Equatable {
        /// The bell file's device number.
        public var device: UInt64
        /// The bell file's inode number.
        public var inode: UInt64
        /// Whether the process rings the bell after each of its commits (it mapped it for writing).
        public var rings: Bool
        /// Whether a thread of the process waits on the bell and reads the ledger when it rings.
        public var hears: Bool

        /// A bell use: the file (`device`, `inode`) and what the process does with it.
        public init(device: UInt64, inode: UInt64, rings: Bool, hears: Bool) {
            self.device = device
            self.inode = inode
            self.rings = rings
            self.hears = hears
        }

        /// Whether a frame from a process using the bell as `sender` need not reach a
        /// process using it as `self`: the sender rang this very bell, and this process hears it.
        public func isRung(by sender: BellUse?) -> Bool {
            guard let sender else { return false }
            return hears && sender.rings && device == sender.device && inode == sender.inode
        }

        /// The flags byte of the wire form: bit 0 rings, bit 1 hears.
        var flags: UInt8 { (rings ? 1 : 0) | (hears ? 2 : 0) }
    }
}
